/* Metrics: exact exposition text for a small registry, label escaping, tenant
 * filtering, histogram buckets, fixed cardinality, and format sanity. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "broker/api/metrics.h"

static vf_metrics *registry_with(const char *tenant, const char *const *providers, size_t n)
{
    vf_metrics *m = vf_metrics_new();
    cr_assert_not_null(m);
    cr_assert_eq(vf_metrics_add_tenant(m, tenant, providers, n), 0);
    return m;
}

static char *render(vf_metrics *m, const char *tenant)
{
    size_t len = 0;
    char *text = vf_metrics_render(m, tenant, &len);
    cr_assert_not_null(text);
    cr_assert_eq(strlen(text), len);
    return text;
}

/* Value of the sample line that starts with `series ` exactly; -1 when absent. */
static double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        if ((size_t)(end - line) > n && strncmp(line, series, n) == 0 && line[n] == ' ')
            return strtod(line + n + 1, NULL);
        line = *end ? end + 1 : end;
    }
    return -1;
}

Test(metrics, exact_text_for_a_small_registry)
{
    const char *providers[] = { "direct" };
    vf_metrics *m = registry_with("acme", providers, 1);
    vf_metrics_count_lookup(m, "acme", VF_LOOKUP_SUCCESS);
    vf_metrics_count_lookup(m, "acme", VF_LOOKUP_SUCCESS);
    vf_metrics_count_lookup(m, "acme", VF_LOOKUP_ERROR);
    vf_metrics_count_attempt(m, "acme", "direct", VF_OUTCOME_OK);
    vf_metrics_count_attempt(m, "acme", "direct", VF_OUTCOME_OK);
    vf_metrics_count_attempt(m, "acme", "direct", VF_OUTCOME_TRANSPORT_ERROR);
    vf_metrics_count_egress_denial(m, "acme", "loopback");
    vf_metrics_observe_spawn(m, 0.0015);
    vf_metrics_observe_spawn(m, 0.003);
    vf_metrics_observe_lookup(m, "acme", 0.2);
    vf_metrics_set_circuit_state(m, "acme", "direct", 1);
    vf_metrics_workers_add(m, 2);
    vf_metrics_workers_add(m, -1);

    const char *expected =
        "# HELP verifetch_lookups_total Lookups by tenant and result status.\n"
        "# TYPE verifetch_lookups_total counter\n"
        "verifetch_lookups_total{tenant=\"acme\",status=\"success\"} 2\n"
        "verifetch_lookups_total{tenant=\"acme\",status=\"error\"} 1\n"
        "verifetch_lookups_total{tenant=\"acme\",status=\"bad_request\"} 0\n"
        "verifetch_lookups_total{tenant=\"acme\",status=\"throttled\"} 0\n"
        "# HELP verifetch_attempts_total Provider attempts by tenant, provider and outcome.\n"
        "# TYPE verifetch_attempts_total counter\n"
        "verifetch_attempts_total{tenant=\"acme\",provider=\"direct\",outcome=\"ok\"} 2\n"
        "verifetch_attempts_total{tenant=\"acme\",provider=\"direct\",outcome=\"transport_error\"} 1\n"
        "verifetch_attempts_total{tenant=\"acme\",provider=\"direct\",outcome=\"http_error\"} 0\n"
        "verifetch_attempts_total{tenant=\"acme\",provider=\"direct\",outcome=\"unusable_content\"} 0\n"
        "verifetch_attempts_total{tenant=\"acme\",provider=\"direct\",outcome=\"malformed_response\"} 0\n"
        "# HELP verifetch_egress_denials_total Connections refused by egress policy, by tenant and rule.\n"
        "# TYPE verifetch_egress_denials_total counter\n"
        "verifetch_egress_denials_total{tenant=\"acme\",rule=\"loopback\"} 1\n"
        "# HELP verifetch_worker_spawn_seconds Time to spawn one confined worker.\n"
        "# TYPE verifetch_worker_spawn_seconds histogram\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"0.0005\"} 0\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"0.001\"} 0\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"0.0025\"} 1\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"0.005\"} 2\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"0.01\"} 2\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"0.025\"} 2\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"0.05\"} 2\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"0.1\"} 2\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"0.25\"} 2\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"0.5\"} 2\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"1\"} 2\n"
        "verifetch_worker_spawn_seconds_bucket{le=\"+Inf\"} 2\n"
        "verifetch_worker_spawn_seconds_sum 0.0045\n"
        "verifetch_worker_spawn_seconds_count 2\n"
        "# HELP verifetch_lookup_seconds Lookup latency by tenant, every attempt included.\n"
        "# TYPE verifetch_lookup_seconds histogram\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"0.05\"} 0\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"0.1\"} 0\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"0.25\"} 1\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"0.5\"} 1\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"1\"} 1\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"2.5\"} 1\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"5\"} 1\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"10\"} 1\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"15\"} 1\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"30\"} 1\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"60\"} 1\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"120\"} 1\n"
        "verifetch_lookup_seconds_bucket{tenant=\"acme\",le=\"+Inf\"} 1\n"
        "verifetch_lookup_seconds_sum{tenant=\"acme\"} 0.2\n"
        "verifetch_lookup_seconds_count{tenant=\"acme\"} 1\n"
        "# HELP verifetch_circuit_state Provider circuit breaker state (0 closed, 1 open, 2 half-open).\n"
        "# TYPE verifetch_circuit_state gauge\n"
        "verifetch_circuit_state{tenant=\"acme\",provider=\"direct\"} 1\n"
        "# HELP verifetch_workers_active Workers alive now.\n"
        "# TYPE verifetch_workers_active gauge\n"
        "verifetch_workers_active 1\n"
        "# HELP verifetch_state_backend_errors_total Shared-store (Redis/Valkey) operations that failed; lookups fell back to local state.\n"
        "# TYPE verifetch_state_backend_errors_total counter\n"
        "verifetch_state_backend_errors_total 0\n"
        "# HELP verifetch_state_round_trips_total Shared-store round trips a request waited for (a pipelined batch counts once).\n"
        "# TYPE verifetch_state_round_trips_total counter\n"
        "verifetch_state_round_trips_total 0\n"
        "# HELP verifetch_cache_lookups_total Lookup cache results.\n"
        "# TYPE verifetch_cache_lookups_total counter\n"
        "verifetch_cache_lookups_total{result=\"hit\"} 0\n"
        "verifetch_cache_lookups_total{result=\"miss\"} 0\n"
        "verifetch_cache_lookups_total{result=\"bypass\"} 0\n";
    char *text = render(m, NULL);
    cr_assert_str_eq(text, expected);
    free(text);
    text = render(m, "acme");
    cr_assert_str_eq(text, expected, "the tenant's own view of a one-tenant registry is everything");
    free(text);
    vf_metrics_free(m);
}

Test(metrics, label_values_are_escaped)
{
    const char *providers[] = { "p\\1", "q\"2" };
    vf_metrics *m = registry_with("we\"ird\\ten\nant", providers, 2);
    cr_assert_eq(vf_metrics_count_attempt(m, "we\"ird\\ten\nant", "q\"2", VF_OUTCOME_HTTP_ERROR), 0);
    cr_assert_eq(vf_metrics_count_egress_denial(m, "we\"ird\\ten\nant", "rule\nwith \"quotes\""), 0);
    char *text = render(m, NULL);
    cr_assert(sample(text, "verifetch_attempts_total{tenant=\"we\\\"ird\\\\ten\\nant\",provider=\"q\\\"2\",outcome=\"http_error\"}") == 1,
              "%s", text);
    cr_assert(sample(text, "verifetch_circuit_state{tenant=\"we\\\"ird\\\\ten\\nant\",provider=\"p\\\\1\"}") == 0);
    cr_assert(sample(text, "verifetch_egress_denials_total{tenant=\"we\\\"ird\\\\ten\\nant\",rule=\"rule\\nwith \\\"quotes\\\"\"}") == 1);
    /* No raw newline may survive inside a label: every line starts like a sample or a comment. */
    for (const char *line = text; *line; line = strchr(line, '\n') + 1)
        cr_assert(strncmp(line, "verifetch_", 10) == 0 || line[0] == '#', "stray line: %.40s", line);
    free(text);
    vf_metrics_free(m);
}

/* Issue 13 item 12: with two tenants, neither scrape shows the global rows
 * (spawn histogram, workers_active, cache, shared store), which sum the
 * other tenant's activity; the unfiltered view still has them. */
Test(metrics, a_tenant_sees_only_its_own_labels_and_no_global_rows_beside_others)
{
    const char *pa[] = { "alpha-provider" };
    const char *pb[] = { "beta-provider" };
    vf_metrics *m = registry_with("alpha", pa, 1);
    cr_assert_eq(vf_metrics_add_tenant(m, "beta", pb, 1), 0);
    vf_metrics_count_lookup(m, "alpha", VF_LOOKUP_SUCCESS);
    vf_metrics_count_lookup(m, "beta", VF_LOOKUP_THROTTLED);
    vf_metrics_count_egress_denial(m, "beta", "rfc1918");
    vf_metrics_observe_lookup(m, "beta", 1);
    vf_metrics_observe_spawn(m, 0.002);
    vf_metrics_workers_add(m, 3);

    char *a = render(m, "alpha");
    cr_assert_null(strstr(a, "beta"), "alpha's view names beta:\n%s", a);
    cr_assert_null(strstr(a, "rfc1918"));
    cr_assert(sample(a, "verifetch_lookups_total{tenant=\"alpha\",status=\"success\"}") == 1);
    cr_assert(sample(a, "verifetch_worker_spawn_seconds_count") == -1, "alpha sees beta's spawns:\n%s", a);
    cr_assert(sample(a, "verifetch_workers_active") == -1, "alpha sees beta's workers:\n%s", a);
    cr_assert_null(strstr(a, "verifetch_cache_lookups_total{"), "alpha sees the shared cache:\n%s", a);
    cr_assert_not_null(strstr(a, "# TYPE verifetch_workers_active gauge\n"), "families always declared");
    char *everything = render(m, NULL);
    cr_assert(sample(everything, "verifetch_workers_active") == 3);
    cr_assert(sample(everything, "verifetch_worker_spawn_seconds_count") == 1);
    free(everything);
    cr_assert_not_null(strstr(a, "# TYPE verifetch_egress_denials_total counter\n"), "families always declared");

    char *b = render(m, "beta");
    cr_assert_null(strstr(b, "alpha"));
    cr_assert(sample(b, "verifetch_lookups_total{tenant=\"beta\",status=\"throttled\"}") == 1);
    cr_assert(sample(b, "verifetch_egress_denials_total{tenant=\"beta\",rule=\"rfc1918\"}") == 1);
    cr_assert(sample(b, "verifetch_lookup_seconds_count{tenant=\"beta\"}") == 1);

    char *none = render(m, "nobody");
    cr_assert_null(strstr(none, "tenant="), "unknown tenant sees no labelled rows:\n%s", none);
    cr_assert(sample(none, "verifetch_worker_spawn_seconds_bucket{le=\"+Inf\"}") == -1);

    char *all = render(m, NULL);
    cr_assert_not_null(strstr(all, "alpha"));
    cr_assert_not_null(strstr(all, "beta"));
    free(a);
    free(b);
    free(none);
    free(all);
    vf_metrics_free(m);
}

Test(metrics, histogram_buckets_are_cumulative_and_inclusive)
{
    vf_metrics *m = registry_with("t", NULL, 0);
    const double obs[] = { 0.05, 0.0500001, 0.1, 7, 120, 121, 1e9, 0 };
    double sum = 0;
    for (size_t i = 0; i < sizeof obs / sizeof obs[0]; i++) {
        cr_assert_eq(vf_metrics_observe_lookup(m, "t", obs[i]), 0);
        sum += obs[i];
    }
    char *text = render(m, NULL);
    const struct { const char *le; double count; } want[] = {
        { "0.05", 2 }, { "0.1", 4 }, { "0.25", 4 }, { "5", 4 }, { "10", 5 }, { "60", 5 },
        { "120", 6 }, { "+Inf", 8 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char series[128];
        snprintf(series, sizeof series, "verifetch_lookup_seconds_bucket{tenant=\"t\",le=\"%s\"}", want[i].le);
        cr_expect(sample(text, series) == want[i].count, "le=%s: got %g, want %g", want[i].le,
                  sample(text, series), want[i].count);
    }
    cr_assert(sample(text, "verifetch_lookup_seconds_count{tenant=\"t\"}") == 8);
    cr_assert_float_eq(sample(text, "verifetch_lookup_seconds_sum{tenant=\"t\"}"), sum, sum * 1e-12);
    free(text);
    vf_metrics_free(m);
}

Test(metrics, unregistered_labels_and_bad_values_record_nothing)
{
    const char *providers[] = { "direct" };
    vf_metrics *m = registry_with("acme", providers, 1);
    char *before = render(m, NULL);
    cr_assert_eq(vf_metrics_count_lookup(m, "intruder", VF_LOOKUP_SUCCESS), -1);
    cr_assert_eq(vf_metrics_count_lookup(m, "acme", (vf_lookup_status)17), -1);
    cr_assert_eq(vf_metrics_count_attempt(m, "acme", "unknown-provider", VF_OUTCOME_OK), -1);
    cr_assert_eq(vf_metrics_count_attempt(m, "acme", "direct", (vf_outcome)5), -1);
    cr_assert_eq(vf_metrics_count_attempt(m, NULL, "direct", VF_OUTCOME_OK), -1);
    cr_assert_eq(vf_metrics_count_egress_denial(m, "intruder", "loopback"), -1);
    cr_assert_eq(vf_metrics_count_egress_denial(m, "acme", ""), -1);
    cr_assert_eq(vf_metrics_observe_lookup(m, "acme", -0.1), -1);
    cr_assert_eq(vf_metrics_observe_lookup(m, "acme", NAN), -1);
    cr_assert_eq(vf_metrics_observe_spawn(m, INFINITY), -1);
    cr_assert_eq(vf_metrics_observe_lookup(m, "intruder", 1), -1);
    cr_assert_eq(vf_metrics_set_circuit_state(m, "acme", "direct", 3), -1);
    cr_assert_eq(vf_metrics_set_circuit_state(m, "acme", "direct", -1), -1);
    cr_assert_eq(vf_metrics_set_circuit_state(m, "acme", "other", 1), -1);
    char *after = render(m, NULL);
    cr_assert_str_eq(after, before);
    cr_assert_eq(vf_metrics_add_tenant(m, "", NULL, 0), -1);
    const char *bad[] = { "ok", "" };
    cr_assert_eq(vf_metrics_add_tenant(m, "acme", bad, 2), -1);
    free(before);
    free(after);
    vf_metrics_free(m);
}

Test(metrics, egress_rule_labels_are_capped)
{
    vf_metrics *m = registry_with("acme", NULL, 0);
    for (unsigned i = 0; i < VF_METRICS_MAX_RULES + 10; i++) {
        char rule[32];
        snprintf(rule, sizeof rule, "rule%u", i);
        cr_assert_eq(vf_metrics_count_egress_denial(m, "acme", rule), 0);
    }
    vf_metrics_count_egress_denial(m, "acme", "rule0");
    char *text = render(m, NULL);
    cr_assert(sample(text, "verifetch_egress_denials_total{tenant=\"acme\",rule=\"rule0\"}") == 2);
    cr_assert(sample(text, "verifetch_egress_denials_total{tenant=\"acme\",rule=\"rule31\"}") == 1);
    cr_assert(sample(text, "verifetch_egress_denials_total{tenant=\"acme\",rule=\"rule32\"}") == -1);
    cr_assert(sample(text, "verifetch_egress_denials_total{tenant=\"acme\",rule=\"other\"}") == 10);
    size_t rows = 0;
    for (const char *p = text; (p = strstr(p, "verifetch_egress_denials_total{")); p++)
        rows++;
    cr_assert_eq(rows, VF_METRICS_MAX_RULES + 1);
    free(text);
    vf_metrics_free(m);
}

Test(metrics, reregistering_adds_providers_and_keeps_counts)
{
    const char *v1[] = { "direct" };
    const char *v2[] = { "direct", "fetcher" };
    vf_metrics *m = registry_with("acme", v1, 1);
    vf_metrics_count_attempt(m, "acme", "direct", VF_OUTCOME_OK);
    cr_assert_eq(vf_metrics_count_attempt(m, "acme", "fetcher", VF_OUTCOME_OK), -1);
    cr_assert_eq(vf_metrics_add_tenant(m, "acme", v2, 2), 0);
    cr_assert_eq(vf_metrics_count_attempt(m, "acme", "fetcher", VF_OUTCOME_OK), 0);
    char *text = render(m, NULL);
    cr_assert(sample(text, "verifetch_attempts_total{tenant=\"acme\",provider=\"direct\",outcome=\"ok\"}") == 1);
    cr_assert(sample(text, "verifetch_attempts_total{tenant=\"acme\",provider=\"fetcher\",outcome=\"ok\"}") == 1);
    size_t declared = 0;
    for (const char *p = text; (p = strstr(p, "# TYPE verifetch_lookups_total")); p++)
        declared++;
    cr_assert_eq(declared, 1);
    cr_assert(sample(text, "verifetch_lookups_total{tenant=\"acme\",status=\"success\"}") == 0);
    free(text);
    vf_metrics_free(m);
}

/* Every sample line belongs to the family declared by the TYPE line above it. */
Test(metrics, every_sample_follows_its_type_line)
{
    const char *providers[] = { "a", "b" };
    vf_metrics *m = registry_with("t1", providers, 2);
    vf_metrics_add_tenant(m, "t2", providers, 1);
    vf_metrics_count_egress_denial(m, "t2", "port");
    char *text = render(m, NULL);
    char family[128] = "";
    const char *type = "";
    size_t samples = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "# TYPE ", 7) == 0) {
            char t[32];
            cr_assert_eq(sscanf(line + 7, "%127s %31s", family, t), 2);
            type = strcmp(t, "histogram") == 0 ? "histogram" : "other";
            continue;
        }
        if (line[0] == '#')
            continue;
        samples++;
        size_t fl = strlen(family);
        cr_assert(fl > 0 && strncmp(line, family, fl) == 0, "'%s' outside family %s", line, family);
        const char *rest = line + fl;
        if (strcmp(type, "histogram") == 0)
            cr_assert(strncmp(rest, "_bucket{", 8) == 0 || strncmp(rest, "_sum", 4) == 0 ||
                      strncmp(rest, "_count", 6) == 0, "'%s'", line);
        else
            cr_assert(*rest == '{' || *rest == ' ', "'%s'", line);
        const char *value = strrchr(line, ' ');
        cr_assert_not_null(value);
        char *end = NULL;
        strtod(value + 1, &end);
        cr_assert(end && *end == '\0', "value of '%s' is not a number", line);
    }
    /* 2 tenants x 4 statuses + (2+1) providers x 5 outcomes + 1 denial + 14 spawn + 2 x 15 lookup + 3 circuit + 1
     * workers + 1 shared-store errors + 1 shared-store round trips + 3 cache results */
    cr_assert_eq(samples, 8 + 15 + 1 + 14 + 30 + 3 + 1 + 1 + 1 + 3);
    free(text);
    vf_metrics_free(m);
}

Test(metrics, content_type_is_the_0_0_4_text_format)
{
    cr_assert_str_eq(VF_METRICS_CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
}
