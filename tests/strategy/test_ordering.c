/* Provider ordering: host pattern matching, every strategy, budgets, health
 * gating with its reasons and probe bookkeeping, limits, config validation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "policy/ordering.h"

#define TENANT "acme"

static vf_provider_config prov(const char *name, double cost)
{
    vf_provider_config p;
    memset(&p, 0, sizeof p);
    p.name = (char *)name;
    p.cost_per_call = cost;
    return p;
}

/* Names of the chosen order, space-separated, for one-line assertions. */
static const char *names(const vf_order *o, const vf_provider_config *ps)
{
    static char buf[512];
    buf[0] = '\0';
    for (size_t i = 0; i < o->n; i++) {
        strcat(buf, i ? " " : "");
        strcat(buf, ps[o->index[i]].name);
    }
    return buf;
}

static vf_order order_for(const vf_provider_config *ps, size_t n, const vf_order_config *cfg,
                          const char *host, vf_circuit_registry *r, uint64_t now, size_t limit)
{
    vf_order_input in = {
        .tenant = TENANT, .providers = ps, .n_providers = n, .host = host, .cfg = cfg,
        .circuits = r, .now_ms = now, .limit = limit,
    };
    vf_order o;
    cr_assert_eq(vf_order_compute(&in, &o), 0, "compute failed: %s", o.reason);
    return o;
}

/* ---- host patterns ---- */

Test(pattern, wildcard_matches_subdomains_only)
{
    const struct { const char *pattern, *host; bool match; } cases[] = {
        { "*.example.com", "a.example.com", true },
        { "*.example.com", "a.b.example.com", true },
        { "*.example.com", "A.EXAMPLE.COM", true },
        { "*.example.com", "a.example.com.", true },
        { "*.example.com", "example.com", false },      /* apex is not included */
        { "*.example.com", "badexample.com", false },
        { "*.example.com", "xexample.com", false },
        { "*.example.com", ".example.com", false },
        { "*.example.com", "a..example.com", false },
        { "*.example.com", "example.com.evil.net", false },
        { "*.example.com", "a.example.com.evil.net", false },
        { "*.example.com", "a.example.co", false },
        { "*.Example.COM", "a.example.com", true },     /* pattern case does not matter either */
        { "example.com", "example.com", true },
        { "example.com", "EXAMPLE.com.", true },
        { "example.com", "a.example.com", false },
        { "example.com", "badexample.com", false },
        { "example.com", "example.co", false },
        { "example.com", "example.com.au", false },
        { "*", "anything.example", true },
        { "*", "10.0.0.1", true },
        { "*", "", false },
        { "10.0.0.1", "10.0.0.1", true },
        { "10.0.0.1", "10.0.0.10", false },
        { "::1", "::1", true },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(vf_host_pattern_match(cases[i].pattern, cases[i].host), cases[i].match,
                     "pattern '%s' host '%s': expected %s", cases[i].pattern, cases[i].host,
                     cases[i].match ? "match" : "no match");
    cr_assert_not(vf_host_pattern_match("*", NULL));
}

Test(pattern, invalid_patterns_are_rejected_and_never_match)
{
    const char *bad[] = { "", "*example.com", "a.*.com", "**.example.com", "*.", "*.*", ".example.com",
                          "example..com", "example.com.", "exa mple.com", "example.com/path", "*.*.example.com",
                          "ex*ample.com", NULL };
    for (size_t i = 0; bad[i]; i++) {
        cr_expect_not(vf_host_pattern_valid(bad[i]), "'%s' should be invalid", bad[i]);
        cr_expect_not(vf_host_pattern_match(bad[i], "a.example.com"), "'%s' matched", bad[i]);
        cr_expect_not(vf_host_pattern_match(bad[i], "example.com"), "'%s' matched", bad[i]);
    }
    cr_assert_not(vf_host_pattern_valid(NULL));
    char longp[300];
    memset(longp, 'a', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    cr_assert_not(vf_host_pattern_valid(longp));
    const char *good[] = { "*", "example.com", "*.example.com", "a-b_c.example", "localhost", "192.0.2.1", NULL };
    for (size_t i = 0; good[i]; i++)
        cr_expect(vf_host_pattern_valid(good[i]), "'%s' should be valid", good[i]);
}

/* ---- static ---- */

Test(order, static_keeps_the_configured_order)
{
    vf_provider_config ps[] = { prov("direct", 0.5), prov("fetcher", 0.001), prov("archive", 0) };
    vf_order o = order_for(ps, 3, NULL, "example.com", NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "direct fetcher archive");
    cr_assert_str_eq(o.reason, "static: configured order");
    cr_assert_not(o.has_tickets);
    o = order_for(ps, 3, NULL, NULL, NULL, 0, 2);
    cr_assert_str_eq(names(&o, ps), "direct fetcher", "limit caps the order");
    o = order_for(ps, 0, NULL, NULL, NULL, 0, 0);
    cr_assert_eq(o.n, 0);
}

/* ---- domain ---- */

static char *dup(const char *s)
{
    char *d = strdup(s);
    cr_assert_not_null(d);
    return d;
}

static char **strings(const char *const *v, size_t *n)
{
    size_t k = 0;
    while (v[k])
        k++;
    char **out = calloc(k ? k : 1, sizeof *out);
    cr_assert_not_null(out);
    for (size_t i = 0; i < k; i++)
        out[i] = dup(v[i]);
    *n = k;
    return out;
}

static void add_rule(vf_order_config *cfg, const char *const *patterns, const char *const *providers)
{
    cfg->rules = realloc(cfg->rules, (cfg->n_rules + 1) * sizeof *cfg->rules);
    cr_assert_not_null(cfg->rules);
    vf_domain_rule *r = &cfg->rules[cfg->n_rules++];
    r->patterns = strings(patterns, &r->n_patterns);
    r->providers = strings(providers, &r->n_providers);
}

static vf_order_config domain_cfg(void)
{
    vf_order_config cfg = { .strategy = VF_ORDER_DOMAIN };
    add_rule(&cfg, (const char *const[]){ "*.news.example", "news.example", NULL },
             (const char *const[]){ "fetcher", NULL });
    add_rule(&cfg, (const char *const[]){ "*.example", NULL }, (const char *const[]){ "archive", "direct", NULL });
    return cfg;
}

Test(order, domain_first_matching_rule_wins_and_unlisted_are_appended)
{
    vf_provider_config ps[] = { prov("direct", 0), prov("fetcher", 0), prov("archive", 0) };
    vf_order_config cfg = domain_cfg();
    cr_assert_eq(vf_order_config_validate(&cfg, ps, 3, NULL, 0), 0);

    vf_order o = order_for(ps, 3, &cfg, "www.news.example", NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "fetcher direct archive", "rule 0 wins though rule 1 matches too");
    cr_assert_str_eq(o.reason, "domain rule '*.news.example'");

    o = order_for(ps, 3, &cfg, "NEWS.example.", NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "fetcher direct archive");
    cr_assert_str_eq(o.reason, "domain rule 'news.example'", "the apex matched its own pattern");

    o = order_for(ps, 3, &cfg, "shop.example", NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "archive direct fetcher");
    cr_assert_str_eq(o.reason, "domain rule '*.example'");

    o = order_for(ps, 3, &cfg, "example", NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "direct fetcher archive", "apex of *.example is not matched");
    cr_assert_str_eq(o.reason, "domain: no rule matched, configured order");

    o = order_for(ps, 3, &cfg, NULL, NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "direct fetcher archive");
    vf_order_config_free(&cfg);
    cr_assert_eq(cfg.n_rules, 0);
}

Test(order, domain_drop_unlisted)
{
    vf_provider_config ps[] = { prov("direct", 0), prov("fetcher", 0), prov("archive", 0) };
    vf_order_config cfg = domain_cfg();
    cfg.drop_unlisted = true;
    vf_order o = order_for(ps, 3, &cfg, "a.news.example", NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "fetcher");
    cr_assert_str_eq(o.reason, "domain rule '*.news.example' (unlisted providers dropped)");
    o = order_for(ps, 3, &cfg, "elsewhere.org", NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "direct fetcher archive", "no match: static, nothing dropped");
    vf_order_config_free(&cfg);
}

Test(order, domain_skips_names_the_tenant_does_not_have)
{
    /* A rule validated against an older provider list must not index out of range. */
    vf_provider_config ps[] = { prov("direct", 0), prov("archive", 0) };
    vf_order_config cfg = domain_cfg();
    vf_order o = order_for(ps, 2, &cfg, "x.news.example", NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "direct archive");
    char err[160];
    cr_assert_eq(vf_order_config_validate(&cfg, ps, 2, err, sizeof err), -1);
    cr_assert_str_eq(err, "rules[0].providers[0]: unknown provider \"fetcher\"");
    vf_order_config_free(&cfg);
}

/* ---- cost ---- */

Test(order, cost_cheapest_first_stable_for_ties)
{
    vf_provider_config ps[] = { prov("fetcher", 0.002), prov("direct", 0), prov("premium", 0.002),
                                prov("archive", 0.001) };
    vf_order_config cfg = { .strategy = VF_ORDER_COST };
    vf_order o = order_for(ps, 4, &cfg, "example.com", NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "direct archive fetcher premium");
    cr_assert_str_eq(o.reason, "cost: cheapest first");
}

Test(order, cost_budget_stops_before_the_cumulative_cost_exceeds_it)
{
    vf_provider_config ps[] = { prov("fetcher", 0.002), prov("direct", 0), prov("premium", 0.002),
                                prov("archive", 0.001) };
    vf_order_config cfg = { .strategy = VF_ORDER_COST, .has_budget = true, .budget = 0.003 };
    vf_order o = order_for(ps, 4, &cfg, NULL, NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "direct archive fetcher", "0 + 0.001 + 0.002 = 0.003 fits exactly");
    cr_assert_str_eq(o.reason, "cost: cheapest first (budget 0.003; over budget: 'premium')");

    cfg.budget = 0.0029;
    o = order_for(ps, 4, &cfg, NULL, NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "direct archive");
    cr_assert_str_eq(o.reason, "cost: cheapest first (budget 0.0029; over budget: 'fetcher', 'premium')");

    cfg.budget = 1;
    o = order_for(ps, 4, &cfg, NULL, NULL, 0, 0);
    cr_assert_eq(o.n, 4);
    cr_assert_str_eq(o.reason, "cost: cheapest first (budget 1)");
}

Test(order, cost_budget_tolerates_binary_fractions)
{
    vf_provider_config ps[] = { prov("a", 0.1), prov("b", 0.2) };   /* 0.1 + 0.2 > 0.3 in doubles */
    vf_order_config cfg = { .strategy = VF_ORDER_COST, .has_budget = true, .budget = 0.3 };
    vf_order o = order_for(ps, 2, &cfg, NULL, NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "a b");
}

Test(order, cost_budget_below_the_cheapest_gives_an_empty_order)
{
    vf_provider_config ps[] = { prov("a", 0.01), prov("b", 0.02) };
    vf_order_config cfg = { .strategy = VF_ORDER_COST, .has_budget = true, .budget = 0.005 };
    vf_order o = order_for(ps, 2, &cfg, NULL, NULL, 0, 0);
    cr_assert_eq(o.n, 0);
    cr_assert_str_eq(o.reason, "cost: cheapest first (budget 0.005; over budget: 'a', 'b')");
}

Test(order, cost_treats_a_broken_price_as_most_expensive)
{
    vf_provider_config ps[] = { prov("nan", NAN), prov("neg", -1), prov("ok", 5) };
    vf_order_config cfg = { .strategy = VF_ORDER_COST };
    vf_order o = order_for(ps, 3, &cfg, NULL, NULL, 0, 0);
    cr_assert_str_eq(names(&o, ps), "ok nan neg");
}

/* ---- health ---- */

static vf_circuit_registry *strict_registry(void)
{
    vf_circuit_params p;
    vf_circuit_params_default(&p);
    p.failure_threshold = 1;
    p.cooldown_ms = 30000;
    vf_circuit_registry *r = vf_circuit_registry_new(&p);
    cr_assert_not_null(r);
    return r;
}

static void fail_once(vf_circuit_registry *r, const char *provider, const char *host, vf_health_outcome o,
                      uint64_t now)
{
    vf_circuit_ticket t;
    vf_circuit_ticket_observe(&t, TENANT, provider, host);
    vf_circuit_record(r, &t, o, -1, now);
}

Test(order, health_skips_an_open_circuit_and_says_how_long)
{
    vf_provider_config ps[] = { prov("primary", 0), prov("secondary", 0) };
    vf_order_config cfg = { .strategy = VF_ORDER_HEALTH };
    vf_circuit_registry *r = strict_registry();
    vf_order o = order_for(ps, 2, &cfg, "example.com", r, 0, 0);
    cr_assert_str_eq(names(&o, ps), "primary secondary");
    cr_assert_str_eq(o.reason, "health: configured order, no circuit open");
    vf_order_release_unused(&o, r);

    fail_once(r, "primary", "example.com", VF_HEALTH_TRANSPORT_ERROR, 0);
    o = order_for(ps, 2, &cfg, "example.com", r, 18000, 0);
    cr_assert_str_eq(names(&o, ps), "secondary");
    cr_assert_str_eq(o.reason, "health: skipped 'primary' (circuit open, 12 s cooldown left)");
    o = order_for(ps, 2, &cfg, "example.com", r, 29001, 0);
    cr_assert_str_eq(o.reason, "health: skipped 'primary' (circuit open, 1 s cooldown left)", "rounded up");
    vf_circuit_registry_free(r);
}

Test(order, health_probe_is_one_lookup_at_a_time_and_closes_on_success)
{
    vf_provider_config ps[] = { prov("primary", 0), prov("secondary", 0) };
    vf_order_config cfg = { .strategy = VF_ORDER_HEALTH };
    vf_circuit_registry *r = strict_registry();
    fail_once(r, "primary", NULL, VF_HEALTH_HTTP_ERROR, 0);

    vf_order a = order_for(ps, 2, &cfg, "example.com", r, 30000, 0);
    cr_assert_str_eq(names(&a, ps), "primary secondary");
    cr_assert_str_eq(a.reason, "health: probing 'primary' (half-open)");
    cr_assert(a.has_tickets);
    cr_assert_neq(a.ticket[0].probe_gen, 0);

    vf_order b = order_for(ps, 2, &cfg, "example.com", r, 30001, 0);
    cr_assert_str_eq(names(&b, ps), "secondary");
    cr_assert_str_eq(b.reason, "health: skipped 'primary' (circuit half-open, probe in flight)");
    vf_order_release_unused(&b, r);

    vf_circuit_record(r, &a.ticket[0], VF_HEALTH_OK, 80, 30100);
    vf_order_release_unused(&a, r);
    vf_order c = order_for(ps, 2, &cfg, "example.com", r, 30200, 0);
    cr_assert_str_eq(names(&c, ps), "primary secondary");
    cr_assert_str_eq(c.reason, "health: configured order, no circuit open");
    vf_circuit_registry_free(r);
}

Test(order, release_unused_returns_a_probe_never_attempted)
{
    vf_provider_config ps[] = { prov("secondary", 0), prov("primary", 0) };
    vf_order_config cfg = { .strategy = VF_ORDER_HEALTH };
    vf_circuit_registry *r = strict_registry();
    fail_once(r, "primary", NULL, VF_HEALTH_TRANSPORT_ERROR, 0);
    vf_order a = order_for(ps, 2, &cfg, NULL, r, 30000, 0);
    cr_assert_str_eq(names(&a, ps), "secondary primary");
    /* secondary answered; primary (the probe) was never tried. */
    vf_circuit_record(r, &a.ticket[0], VF_HEALTH_OK, 10, 30010);
    vf_order_release_unused(&a, r);
    vf_order b = order_for(ps, 2, &cfg, NULL, r, 30020, 0);
    cr_assert_str_eq(b.reason, "health: probing 'primary' (half-open)", "slot was given back");
    vf_circuit_registry_free(r);
}

Test(order, health_domain_scoped_skip)
{
    vf_provider_config ps[] = { prov("primary", 0), prov("secondary", 0) };
    vf_order_config cfg = { .strategy = VF_ORDER_HEALTH };
    vf_circuit_registry *r = strict_registry();
    fail_once(r, "primary", "walled.example", VF_HEALTH_UNUSABLE_CONTENT, 1000);
    vf_order o = order_for(ps, 2, &cfg, "walled.example", r, 21000, 0);
    cr_assert_str_eq(names(&o, ps), "secondary");
    cr_assert_str_eq(o.reason, "health: skipped 'primary' for this host (circuit open, 10 s cooldown left)");
    o = order_for(ps, 2, &cfg, "fine.example", r, 21000, 0);
    cr_assert_str_eq(names(&o, ps), "primary secondary");
    vf_order_release_unused(&o, r);
    vf_circuit_registry_free(r);
}

static void measure(vf_circuit_registry *r, const char *provider, int64_t ms)
{
    vf_circuit_ticket t;
    vf_circuit_ticket_observe(&t, TENANT, provider, NULL);
    vf_circuit_record(r, &t, VF_HEALTH_OK, ms, 0);
}

Test(order, health_by_latency_fastest_first_unmeasured_last)
{
    vf_provider_config ps[] = { prov("slow", 0), prov("fresh", 0), prov("fast", 0), prov("mid", 0),
                                prov("fresh2", 0) };
    vf_order_config cfg = { .strategy = VF_ORDER_HEALTH, .by_latency = true };
    vf_circuit_registry *r = strict_registry();
    measure(r, "slow", 300);
    measure(r, "fast", 100);
    measure(r, "mid", 200);
    vf_order o = order_for(ps, 5, &cfg, NULL, r, 1, 0);
    cr_assert_str_eq(names(&o, ps), "fast mid slow fresh fresh2");
    cr_assert_str_eq(o.reason, "health: fastest first by EWMA latency");
    fail_once(r, "fast", NULL, VF_HEALTH_TRANSPORT_ERROR, 10);
    o = order_for(ps, 5, &cfg, NULL, r, 20, 0);
    cr_assert_str_eq(names(&o, ps), "mid slow fresh fresh2");
    cr_assert_str_eq(o.reason, "health: fastest first by EWMA latency; skipped 'fast' (circuit open, 30 s cooldown left)");
    vf_circuit_registry_free(r);
}

Test(order, skip_unhealthy_layers_onto_domain_rules)
{
    vf_provider_config ps[] = { prov("direct", 0), prov("fetcher", 0), prov("archive", 0) };
    vf_order_config cfg = domain_cfg();
    cfg.skip_unhealthy = true;
    vf_circuit_registry *r = strict_registry();
    fail_once(r, "fetcher", NULL, VF_HEALTH_TRANSPORT_ERROR, 0);
    vf_order o = order_for(ps, 3, &cfg, "a.news.example", r, 5000, 0);
    cr_assert_str_eq(names(&o, ps), "direct archive");
    cr_assert_str_eq(o.reason, "domain rule '*.news.example'; health: skipped 'fetcher' (circuit open, 25 s cooldown left)");
    vf_order_config_free(&cfg);
    vf_circuit_registry_free(r);
}

Test(order, skipped_providers_do_not_spend_the_budget)
{
    vf_provider_config ps[] = { prov("a", 0.001), prov("b", 0.002), prov("c", 0.003) };
    vf_order_config cfg = { .strategy = VF_ORDER_COST, .has_budget = true, .budget = 0.005, .skip_unhealthy = true };
    vf_circuit_registry *r = strict_registry();
    fail_once(r, "a", NULL, VF_HEALTH_TRANSPORT_ERROR, 0);
    vf_order o = order_for(ps, 3, &cfg, NULL, r, 1000, 0);
    cr_assert_str_eq(names(&o, ps), "b c");
    cr_assert_str_eq(o.reason, "cost: cheapest first (budget 0.005); health: skipped 'a' (circuit open, 29 s cooldown left)");
    vf_circuit_registry_free(r);
}

Test(order, limit_takes_no_probe_beyond_it)
{
    vf_provider_config ps[] = { prov("a", 0), prov("b", 0) };
    vf_order_config cfg = { .strategy = VF_ORDER_HEALTH };
    vf_circuit_registry *r = strict_registry();
    fail_once(r, "a", NULL, VF_HEALTH_TRANSPORT_ERROR, 0);
    fail_once(r, "b", NULL, VF_HEALTH_TRANSPORT_ERROR, 0);
    vf_order o = order_for(ps, 2, &cfg, NULL, r, 30000, 1);
    cr_assert_str_eq(names(&o, ps), "a");
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, TENANT, "b", NULL, 30000, &s);
    cr_assert_eq(s.state, VF_CIRCUIT_OPEN, "b was never asked, so it is not half-open");
    cr_assert_not(s.probe_in_flight);
    vf_circuit_registry_free(r);
}

Test(order, ungated_strategies_still_feed_the_circuits)
{
    vf_provider_config ps[] = { prov("a", 0), prov("b", 0) };
    vf_circuit_registry *r = strict_registry();
    vf_order o = order_for(ps, 2, NULL, "example.com", r, 0, 0);
    cr_assert(o.has_tickets);
    cr_assert_not(o.ticket[0].gated);
    vf_circuit_record(r, &o.ticket[0], VF_HEALTH_TRANSPORT_ERROR, -1, 0);
    vf_order_release_unused(&o, r);
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, TENANT, "a", NULL, 0, &s);
    cr_assert_eq(s.state, VF_CIRCUIT_OPEN);
    o = order_for(ps, 2, NULL, "example.com", r, 1, 0);
    cr_assert_str_eq(names(&o, ps), "a b", "static does not skip");
    vf_circuit_registry_free(r);
}

Test(order, long_reasons_are_cut_cleanly)
{
    vf_provider_config ps[VF_ORDER_MAX];
    char name_buf[VF_ORDER_MAX][40];
    vf_circuit_registry *r = strict_registry();
    for (size_t i = 0; i < VF_ORDER_MAX; i++) {
        snprintf(name_buf[i], sizeof name_buf[i], "provider-with-a-long-name-%02zu", i);
        ps[i] = prov(name_buf[i], 0);
        fail_once(r, name_buf[i], NULL, VF_HEALTH_TRANSPORT_ERROR, 0);
    }
    vf_order_config cfg = { .strategy = VF_ORDER_HEALTH };
    vf_order o = order_for(ps, VF_ORDER_MAX, &cfg, NULL, r, 1, 0);
    cr_assert_eq(o.n, 0);
    size_t len = strlen(o.reason);
    cr_assert_lt(len, VF_ORDER_REASON_MAX);
    cr_assert_str_eq(o.reason + len - 3, "...");
    const char *start = "health: skipped 'provider-with-a-long-name-00' (circuit open, 30 s cooldown left); skipped";
    cr_assert(strncmp(o.reason, start, strlen(start)) == 0, "got: %s", o.reason);
    vf_circuit_registry_free(r);
}

Test(order, bad_input_is_an_error_not_a_crash)
{
    vf_provider_config ps[VF_ORDER_MAX + 1];
    for (size_t i = 0; i <= VF_ORDER_MAX; i++)
        ps[i] = prov("p", 0);
    vf_order o;
    vf_order_input in = { .tenant = TENANT, .providers = ps, .n_providers = VF_ORDER_MAX + 1 };
    cr_assert_eq(vf_order_compute(&in, &o), -1);
    cr_assert_str_eq(o.reason, "ordering: 33 providers exceed the limit of 32");
    vf_order_config cfg = { .strategy = VF_ORDER_HEALTH };
    in.n_providers = 1;
    in.cfg = &cfg;
    cr_assert_eq(vf_order_compute(&in, &o), -1);
    cr_assert_str_eq(o.reason, "ordering: health gating needs a circuit registry");
    cr_assert_eq(vf_order_compute(NULL, &o), -1);
}

/* ---- config ---- */

Test(config, strategy_names_round_trip)
{
    vf_order_strategy s;
    const char *all[] = { "static", "domain", "cost", "health" };
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(vf_order_strategy_parse(all[i], &s), 0);
        cr_assert_str_eq(vf_order_strategy_name(s), all[i]);
    }
    cr_assert_eq(vf_order_strategy_parse("fastest", &s), -1);
    cr_assert_eq(vf_order_strategy_parse(NULL, &s), -1);
}

static void expect_invalid(const vf_order_config *cfg, const vf_provider_config *ps, size_t n, const char *msg)
{
    char err[200];
    cr_assert_eq(vf_order_config_validate(cfg, ps, n, err, sizeof err), -1, "expected: %s", msg);
    cr_assert_str_eq(err, msg);
}

Test(config, validation_names_the_problem)
{
    vf_provider_config ps[] = { prov("direct", 0), prov("fetcher", 0), prov("archive", 0) };
    vf_order_config ok = domain_cfg();
    cr_assert_eq(vf_order_config_validate(&ok, ps, 3, NULL, 0), 0);
    vf_order_config_free(&ok);

    vf_order_config c = { .strategy = VF_ORDER_STATIC };
    cr_assert_eq(vf_order_config_validate(&c, ps, 3, NULL, 0), 0);
    c = (vf_order_config){ .strategy = (vf_order_strategy)9 };
    expect_invalid(&c, ps, 3, "strategy: must be \"static\", \"domain\", \"cost\" or \"health\"");
    c = (vf_order_config){ .strategy = VF_ORDER_DOMAIN };
    expect_invalid(&c, ps, 3, "rules: strategy \"domain\" needs at least one rule");
    c = (vf_order_config){ .strategy = VF_ORDER_STATIC, .has_budget = true, .budget = 1 };
    expect_invalid(&c, ps, 3, "budget: only used with strategy \"cost\"");
    c = (vf_order_config){ .strategy = VF_ORDER_COST, .has_budget = true, .budget = -0.5 };
    expect_invalid(&c, ps, 3, "budget: must be a number >= 0");
    c = (vf_order_config){ .strategy = VF_ORDER_COST, .has_budget = true, .budget = NAN };
    expect_invalid(&c, ps, 3, "budget: must be a number >= 0");
    c = (vf_order_config){ .strategy = VF_ORDER_COST, .by_latency = true };
    expect_invalid(&c, ps, 3, "by_latency: only used with strategy \"health\"");
    c = (vf_order_config){ .strategy = VF_ORDER_HEALTH, .drop_unlisted = true };
    expect_invalid(&c, ps, 3, "rules/unlisted: only used with strategy \"domain\"");

    vf_order_config d = { .strategy = VF_ORDER_DOMAIN };
    add_rule(&d, (const char *const[]){ "*.ok.example", "bad*.example", NULL }, (const char *const[]){ "direct", NULL });
    expect_invalid(&d, ps, 3, "rules[0].match[1]: \"bad*.example\" is not a host pattern (\"host\", \"*.host\" or \"*\")");
    vf_order_config_free(&d);
    d = (vf_order_config){ .strategy = VF_ORDER_DOMAIN };
    add_rule(&d, (const char *const[]){ "a.example", NULL }, (const char *const[]){ "direct", NULL });
    add_rule(&d, (const char *const[]){ "b.example", NULL }, (const char *const[]){ "fetcher", "direct", "fetcher", NULL });
    expect_invalid(&d, ps, 3, "rules[1].providers[2]: \"fetcher\" is listed twice");
    vf_order_config_free(&d);
    d = (vf_order_config){ .strategy = VF_ORDER_DOMAIN };
    add_rule(&d, (const char *const[]){ NULL }, (const char *const[]){ "direct", NULL });
    expect_invalid(&d, ps, 3, "rules[0].match: needs 1..64 host patterns");
    vf_order_config_free(&d);
}
