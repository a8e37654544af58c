/* E2E: provider ordering strategies as the real broker applies them. A page
 * that fails for every provider (/500) makes the whole order visible in
 * attempts_log; provider_order_reason says why that order was chosen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "pol.h"

TestSuite(ordering, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static hx_origin origin;
static pol_broker broker;
static pol_broker_opts opts;
static char tenants[4096];

static void start(const char *providers, const char *extra)
{
    hx_origin_start(&origin, NULL, NULL);
    pol_fmt(tenants, sizeof tenants, "{ name = \"ord\"; uids = [ 0 ]; " POL_EGRESS_LOOPBACK
            " providers = ( %s ); %s }", providers, extra);
    opts = (pol_broker_opts){ .tenants = tenants };
    pol_broker_start(&broker, &opts);
}

static hx_response lookup_on(const char *host, const char *path)
{
    char url[256];
    pol_fmt(url, sizeof url, "http://%s:%d%s", host, origin.port, path);
    return pol_lookup(&broker, url, NULL);
}

/* A failed lookup whose attempts_log is exactly `order`, every attempt a 500. */
static void expect_order(const hx_response *r, const char *order, const char *reason_part, int available)
{
    char got[256];
    hx_receipt_expect e = {
        .ok = false, .max_attempts = -1, .providers_available = available,
        .n_attempts = 0,
    };
    for (const char *p = order; *p; p++)
        e.n_attempts += *p == ',';
    e.n_attempts++;
    for (size_t i = 0; i < e.n_attempts; i++) {
        e.attempts[i].outcome = "http_error";
        e.attempts[i].http_status = 500;
    }
    free(hx_check_tool_result(r, &e));
    cr_assert_str_eq(pol_order(r, got, sizeof got), order, "order; body: %s", r->body);
    const char *reason = pol_receipt_str(r, "provider_order_reason");
    cr_assert(hx_contains_ci(reason, reason_part), "provider_order_reason '%s' lacks '%s'",
              reason ? reason : "(missing)", reason_part);
}

#define THREE_DIRECT \
    "{ name = \"p1\"; kind = \"direct\"; }, { name = \"p2\"; kind = \"direct\"; }, " \
    "{ name = \"p3\"; kind = \"direct\"; }"

Test(ordering, domain_rule_for_the_host_sets_the_order)
{
    start(THREE_DIRECT,
          "ordering = { strategy = \"domain\"; rules = ("
          " { match = [ \"example.com\", \"*.example.com\" ]; providers = [ \"p2\" ]; },"
          " { match = [ \"127.0.0.1\" ]; providers = [ \"p3\", \"p1\" ]; } ); };");
    hx_response r = lookup_on("127.0.0.1", "/500");
    expect_order(&r, "p3,p1,p2", "domain rule '127.0.0.1'", 3);
    hx_response_free(&r);
    /* Same origin under a name no rule matches: configured order. */
    hx_response other = lookup_on("localhost", "/500");
    expect_order(&other, "p1,p2,p3", "no rule matched", 3);
    hx_response_free(&other);
}

Test(ordering, domain_rule_can_drop_unlisted_providers)
{
    start(THREE_DIRECT,
          "ordering = { strategy = \"domain\"; unlisted = \"drop\";"
          " rules = ( { match = [ \"127.0.0.1\" ]; providers = [ \"p3\", \"p1\" ]; } ); };");
    hx_response r = lookup_on("127.0.0.1", "/500");
    expect_order(&r, "p3,p1", "dropped", 3);
    hx_response_free(&r);
}

#define PRICED \
    "{ name = \"pricey\"; kind = \"direct\"; cost = 0.5; }, " \
    "{ name = \"cheap\"; kind = \"direct\"; cost = 0.01; }, " \
    "{ name = \"mid\"; kind = \"direct\"; cost = 0.1; }"

Test(ordering, cost_puts_the_cheapest_first)
{
    start(PRICED, "ordering = { strategy = \"cost\"; };");
    hx_response r = lookup_on("127.0.0.1", "/500");
    expect_order(&r, "cheap,mid,pricey", "cheapest first", 3);
    hx_response_free(&r);
    hx_response ok = lookup_on("127.0.0.1", "/page");
    cr_assert_eq(ok.status, 200);
    cr_assert_str_eq(pol_receipt_str(&ok, "provider_used"), "cheap", "body: %s", ok.body);
    hx_response_free(&ok);
}

Test(ordering, cost_budget_leaves_out_what_it_cannot_pay)
{
    start(PRICED, "ordering = { strategy = \"cost\"; budget = 0.2; };");
    hx_response r = lookup_on("127.0.0.1", "/500");
    expect_order(&r, "cheap,mid", "over budget: 'pricey'", 3);
    hx_response_free(&r);
}

/* ---- health ----------------------------------------------------------------- */

#define COOLDOWN_MS 1500

static hx_response health_lookup(void)
{
    return lookup_on("127.0.0.1", "/page");
}

/* Served by steady; flaky attempted first (and failed) or skipped. */
static void expect_health(const hx_response *r, bool flaky_tried, const char *reason_part)
{
    hx_receipt_expect e = {
        .ok = true, .max_attempts = -1, .providers_available = 2,
        .n_attempts = flaky_tried ? 2 : 1,
    };
    size_t i = 0;
    if (flaky_tried)
        e.attempts[i++] = (hx_attempt_expect){ .provider = "flaky", .outcome = "transport_error",
                                               .http_status = HX_ANY };
    e.attempts[i] = (hx_attempt_expect){ .provider = "steady", .outcome = "ok", .http_status = 200 };
    free(hx_check_tool_result(r, &e));
    const char *reason = pol_receipt_str(r, "provider_order_reason");
    cr_assert(hx_contains_ci(reason, reason_part), "provider_order_reason '%s' lacks '%s'; body: %s",
              reason ? reason : "(missing)", reason_part, r->body);
}

static long long flaky_gauge(void)
{
    hx_response m = hx_request(&broker.hx, "GET", "/metrics", NULL, 0);
    long long v = pol_metric(m.body, "verifetch_circuit_state{tenant=\"ord\",provider=\"flaky\"}");
    hx_response_free(&m);
    return v;
}

/* flaky: an http_api provider on a closed port; steady: direct. */
static void start_flaky(unsigned cooldown_ms)
{
    char key[PATH_MAX], providers[1024], extra[256];
    pol_key_file("flaky.key", "flaky-provider-key-0123456789", key, sizeof key);
    pol_fmt(providers, sizeof providers,
            "{ name = \"flaky\"; kind = \"http_api\"; endpoint = \"http://127.0.0.1:%d/fetch?u={url}\";"
            "  credential = { header = \"X-Api-Key\"; key_file = \"%s\"; }; },"
            "{ name = \"steady\"; kind = \"direct\"; }", hx_closed_port(), key);
    pol_fmt(extra, sizeof extra, "ordering = { strategy = \"health\"; };"
            " circuit = { failure_threshold = 2; cooldown_ms = %u; };", cooldown_ms);
    start(providers, extra);
}

Test(ordering, health_skips_a_failing_provider_then_probes_after_cooldown)
{
    start_flaky(COOLDOWN_MS);

    for (int i = 0; i < 2; i++) {
        hx_response r = health_lookup();
        expect_health(&r, true, "no circuit open");
        hx_response_free(&r);
    }
    double opened = hx_now_ms();
    hx_response skipped = health_lookup();
    expect_health(&skipped, false, "skipped 'flaky' (circuit open");
    hx_response_free(&skipped);
    cr_assert_eq(flaky_gauge(), 1, "circuit gauge for flaky should be 1 (open)");

    double wait = opened + COOLDOWN_MS + 150 - hx_now_ms();
    if (wait > 0)
        pol_sleep_ms((unsigned)wait);
    hx_response probe = health_lookup();
    expect_health(&probe, true, "probing 'flaky' (half-open)");
    hx_response_free(&probe);

    /* The probe failed: open again with a fresh cooldown. */
    hx_response again = health_lookup();
    expect_health(&again, false, "skipped 'flaky' (circuit open");
    hx_response_free(&again);
    cr_assert_eq(flaky_gauge(), 1);
}

/* Reloading the same policy keeps what the circuits learned. */
Test(ordering, open_circuit_survives_a_reload)
{
    start_flaky(60000);
    for (int i = 0; i < 2; i++) {
        hx_response r = health_lookup();
        expect_health(&r, true, "no circuit open");
        hx_response_free(&r);
    }
    cr_assert(pol_reload(&broker, &opts, NULL), "reload rejected: %s", hx_broker_log(&broker.hx));
    hx_response r = health_lookup();
    expect_health(&r, false, "skipped 'flaky' (circuit open");
    hx_response_free(&r);
}

/* unusable_content counts against a provider for that host only: after two
 * interstitials on 127.0.0.1 both providers are skipped there, while the same
 * origin under another name is still served. */
Test(ordering, content_failures_open_a_circuit_for_that_host_only)
{
    start("{ name = \"d1\"; kind = \"direct\"; }, { name = \"d2\"; kind = \"direct\"; }",
          "ordering = { strategy = \"health\"; }; circuit = { failure_threshold = 2; cooldown_ms = 60000; };");
    for (int i = 0; i < 2; i++) {
        hx_response r = lookup_on("127.0.0.1", "/interstitial");
        hx_receipt_expect e = {
            .ok = false, .max_attempts = -1, .providers_available = 2, .n_attempts = 2,
            .attempts = { { .provider = "d1", .outcome = "unusable_content", .http_status = 200 },
                          { .provider = "d2", .outcome = "unusable_content", .http_status = 200 } },
        };
        free(hx_check_tool_result(&r, &e));
        hx_response_free(&r);
    }
    hx_response here = lookup_on("127.0.0.1", "/page");
    hx_receipt_expect none = { .ok = false, .max_attempts = -1, .providers_available = 2, .n_attempts = 0 };
    free(hx_check_tool_result(&here, &none));
    const char *reason = pol_receipt_str(&here, "provider_order_reason");
    cr_assert(hx_contains_ci(reason, "skipped 'd1' for this host") &&
                  hx_contains_ci(reason, "skipped 'd2' for this host"),
              "provider_order_reason '%s'", reason ? reason : "(missing)");
    hx_response_free(&here);

    hx_response elsewhere = lookup_on("localhost", "/page");
    hx_receipt_expect served = {
        .ok = true, .max_attempts = -1, .providers_available = 2, .n_attempts = 1,
        .attempts = { { .provider = "d1", .outcome = "ok", .http_status = 200 } },
    };
    free(hx_check_tool_result(&elsewhere, &served));
    hx_response_free(&elsewhere);
    /* Provider-wide the interstitials were working answers: circuits closed. */
    hx_response m = hx_request(&broker.hx, "GET", "/metrics", NULL, 0);
    cr_assert_eq(pol_metric(m.body, "verifetch_circuit_state{tenant=\"ord\",provider=\"d1\"}"), 0, "%s", m.body);
    cr_assert_eq(pol_metric(m.body, "verifetch_circuit_state{tenant=\"ord\",provider=\"d2\"}"), 0);
    hx_response_free(&m);
}
