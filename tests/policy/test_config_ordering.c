/* tenants[].ordering and tenants[].circuit: every strategy parses into the
 * struct ordering.c reads, the parsed values really drive vf_order_compute and
 * the circuit registry, and every bad value names file:line and its path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "config_fixture.h"
#include "policy/circuit.h"
#include "policy/config.h"
#include "policy/ordering.h"

TestSuite(ordering_ok, .init = fx_setup, .fini = fx_teardown);
TestSuite(ordering_err, .init = fx_setup, .fini = fx_teardown);

/* Tenant "t" with providers direct (0), fetcher (1, cost 0.002) and cheap
 * (2, cost 0); the block given as the format argument starts on line 9. */
#define ORD_CONF                                                                           \
    "tenants = ( {\n"                                                                      \
    "  name = \"t\";\n"                                                                    \
    "  providers = (\n"                                                                    \
    "    { name = \"direct\"; kind = \"direct\"; cost = 0.001; },\n"                       \
    "    { name = \"fetcher\"; kind = \"http_api\"; endpoint = \"https://api.example/v1?u={url}\";\n" \
    "      credential = { header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\"; }; cost = 0.002; },\n" \
    "    { name = \"cheap\"; kind = \"direct\"; cost = 0; }\n"                            \
    "  );\n"                                                                               \
    "  %s\n"                                                                               \
    "} );\n"

static const vf_tenant_config *load_tenant(vf_config *cfg, const char *block)
{
    char err[1024];
    cr_assert_eq(fx_load(cfg, err, sizeof err, ORD_CONF, block), 0, "%s\nblock: %s", err, block);
    cr_assert_eq(cfg->n_tenants, 1);
    cr_assert_eq(cfg->tenants[0].n_providers, 3);
    return &cfg->tenants[0];
}

/* vf_order_compute on the tenant as loaded; returns the order as names "a,b". */
static void order_names(const vf_tenant_config *t, const char *host, vf_circuit_registry *circuits,
                        uint64_t now_ms, char *out, size_t outlen)
{
    vf_order_input in = {
        .tenant = t->name, .providers = t->providers, .n_providers = t->n_providers,
        .host = host, .cfg = &t->ordering, .circuits = circuits, .now_ms = now_ms,
    };
    vf_order order;
    cr_assert_eq(vf_order_compute(&in, &order), 0, "%s", order.reason);
    out[0] = '\0';
    for (size_t i = 0; i < order.n; i++) {
        size_t used = strlen(out);
        snprintf(out + used, outlen - used, "%s%s", i ? "," : "", t->providers[order.index[i]].name);
    }
    if (circuits)
        vf_order_release_unused(&order, circuits);
}

/* ---- parsing that succeeds ---- */

Test(ordering_ok, absent_means_static_and_no_circuit)
{
    vf_config cfg;
    const vf_tenant_config *t = load_tenant(&cfg, "");
    cr_assert_eq(t->ordering.strategy, VF_ORDER_STATIC);
    cr_assert_null(t->ordering.rules);
    cr_assert_eq(t->ordering.n_rules, 0);
    cr_assert_not(t->ordering.skip_unhealthy || t->ordering.has_budget || t->ordering.by_latency ||
                  t->ordering.drop_unlisted);
    cr_assert_not(t->has_circuit);
    cr_assert_eq(t->circuit.window, 0, "unconfigured circuit stays all-zero");
    char names[128];
    order_names(t, "example.com", NULL, 0, names, sizeof names);
    cr_assert_str_eq(names, "direct,fetcher,cheap");
    vf_config_free(&cfg);
}

Test(ordering_ok, static_strategy)
{
    vf_config cfg;
    const vf_tenant_config *t = load_tenant(&cfg, "ordering = { strategy = \"static\"; skip_unhealthy = true; };");
    cr_assert_eq(t->ordering.strategy, VF_ORDER_STATIC);
    cr_assert(t->ordering.skip_unhealthy);
    vf_config_free(&cfg);

    t = load_tenant(&cfg, "ordering = { };");
    cr_assert_eq(t->ordering.strategy, VF_ORDER_STATIC, "an empty group is the default");
    cr_assert_not(t->ordering.skip_unhealthy);
    vf_config_free(&cfg);
}

Test(ordering_ok, domain_strategy_round_trips_and_orders)
{
    vf_config cfg;
    const vf_tenant_config *t = load_tenant(&cfg,
        "ordering = { strategy = \"domain\"; unlisted = \"drop\";\n"
        "    rules = (\n"
        "      { match = [ \"example.com\", \"*.example.com\" ]; providers = [ \"fetcher\", \"direct\" ]; },\n"
        "      { match = ( \"*.Docs.test\" ); providers = ( \"cheap\" ); },\n"
        "      { match = [ \"*\" ]; providers = [ \"direct\" ]; }\n"
        "    ); };");
    const vf_order_config *o = &t->ordering;
    cr_assert_eq(o->strategy, VF_ORDER_DOMAIN);
    cr_assert(o->drop_unlisted);
    cr_assert_not(o->skip_unhealthy);
    cr_assert_eq(o->n_rules, 3);
    cr_assert_eq(o->rules[0].n_patterns, 2);
    cr_assert_str_eq(o->rules[0].patterns[0], "example.com");
    cr_assert_str_eq(o->rules[0].patterns[1], "*.example.com");
    cr_assert_eq(o->rules[0].n_providers, 2);
    cr_assert_str_eq(o->rules[0].providers[0], "fetcher");
    cr_assert_str_eq(o->rules[0].providers[1], "direct");
    cr_assert_eq(o->rules[1].n_patterns, 1);
    cr_assert_str_eq(o->rules[1].patterns[0], "*.Docs.test", "patterns are kept as written");
    cr_assert_str_eq(o->rules[1].providers[0], "cheap");
    cr_assert_str_eq(o->rules[2].patterns[0], "*");

    char names[128];
    order_names(t, "www.example.com", NULL, 0, names, sizeof names);
    cr_assert_str_eq(names, "fetcher,direct", "first rule, cheap dropped");
    order_names(t, "a.b.docs.test", NULL, 0, names, sizeof names);
    cr_assert_str_eq(names, "cheap");
    order_names(t, "other.org", NULL, 0, names, sizeof names);
    cr_assert_str_eq(names, "direct");
    vf_config_free(&cfg);

    t = load_tenant(&cfg, "ordering = { strategy = \"domain\"; unlisted = \"append\";\n"
                          "  rules = ( { match = [ \"x.test\" ]; providers = [ \"cheap\" ]; } ); };");
    cr_assert_not(t->ordering.drop_unlisted);
    order_names(t, "x.test", NULL, 0, names, sizeof names);
    cr_assert_str_eq(names, "cheap,direct,fetcher", "unlisted appended in configured order");
    vf_config_free(&cfg);
}

Test(ordering_ok, domain_rules_may_name_the_builtin_direct)
{
    vf_config cfg;
    char err[1024];
    cr_assert_eq(fx_load(&cfg, err, sizeof err,
                         "tenants = ( { ordering = { strategy = \"domain\";\n"
                         "  rules = ( { match = [ \"*\" ]; providers = [ \"direct\" ]; } ); }; } );\n"),
                 0, "%s", err);
    cr_assert_eq(cfg.tenants[0].n_providers, 1);
    cr_assert_str_eq(cfg.tenants[0].ordering.rules[0].providers[0], "direct");
    vf_config_free(&cfg);
}

Test(ordering_ok, cost_strategy_with_budget)
{
    vf_config cfg;
    const vf_tenant_config *t = load_tenant(&cfg, "ordering = { strategy = \"cost\"; budget = 0.0015; };");
    cr_assert_eq(t->ordering.strategy, VF_ORDER_COST);
    cr_assert(t->ordering.has_budget);
    cr_assert_float_eq(t->ordering.budget, 0.0015, 1e-15);
    cr_assert_float_eq(t->providers[0].cost_per_call, 0.001, 1e-15);
    cr_assert_float_eq(t->providers[2].cost_per_call, 0.0, 1e-15);
    char names[128];
    order_names(t, "example.com", NULL, 0, names, sizeof names);
    cr_assert_str_eq(names, "cheap,direct", "0 + 0.001 fit 0.0015; fetcher's 0.002 does not");
    vf_config_free(&cfg);

    /* An integer budget is a number too, and 0 is a real budget (not "none"). */
    t = load_tenant(&cfg, "ordering = { strategy = \"cost\"; budget = 0; skip_unhealthy = false; };");
    cr_assert(t->ordering.has_budget);
    cr_assert_float_eq(t->ordering.budget, 0.0, 1e-15);
    order_names(t, "example.com", NULL, 0, names, sizeof names);
    cr_assert_str_eq(names, "cheap");
    vf_config_free(&cfg);

    t = load_tenant(&cfg, "ordering = { strategy = \"cost\"; };");
    cr_assert_not(t->ordering.has_budget);
    order_names(t, "example.com", NULL, 0, names, sizeof names);
    cr_assert_str_eq(names, "cheap,direct,fetcher");
    vf_config_free(&cfg);
}

Test(ordering_ok, health_strategy_uses_the_parsed_circuit)
{
    vf_config cfg;
    const vf_tenant_config *t = load_tenant(&cfg,
        "ordering = { strategy = \"health\"; by_latency = true; skip_unhealthy = true; };\n"
        "  circuit = { failure_threshold = 1; cooldown_ms = 1000; };");
    cr_assert_eq(t->ordering.strategy, VF_ORDER_HEALTH);
    cr_assert(t->ordering.by_latency);
    cr_assert(t->has_circuit);
    cr_assert_eq(t->circuit.failure_threshold, 1);
    cr_assert_eq(t->circuit.cooldown_ms, 1000);

    vf_circuit_registry *reg = vf_circuit_registry_new(NULL);
    cr_assert_not_null(reg);
    cr_assert_eq(vf_circuit_configure_tenant(reg, t->name, &t->circuit), 0);
    vf_order_input in = {
        .tenant = t->name, .providers = t->providers, .n_providers = t->n_providers,
        .host = "example.com", .cfg = &t->ordering, .circuits = reg, .now_ms = 10,
    };
    vf_order first;
    cr_assert_eq(vf_order_compute(&in, &first), 0, "%s", first.reason);
    cr_assert_eq(first.n, 3);
    cr_assert(first.has_tickets);
    /* One failure opens the circuit because failure_threshold = 1 was parsed. */
    size_t failed = first.index[0];
    vf_circuit_record(reg, &first.ticket[0], VF_HEALTH_TRANSPORT_ERROR, 5, 20);
    vf_order_release_unused(&first, reg);

    char names[128];
    order_names(t, "example.com", reg, 30, names, sizeof names);
    cr_assert_eq(strstr(names, t->providers[failed].name), NULL, "%s still tried: %s",
                 t->providers[failed].name, names);
    cr_assert(strchr(names, ',') != NULL, "the other two remain: %s", names);
    /* After the parsed 1000 ms cooldown the failed provider may probe again. */
    order_names(t, "example.com", reg, 20 + 1000, names, sizeof names);
    cr_assert_neq(strstr(names, t->providers[failed].name), NULL, "probe after cooldown: %s", names);
    vf_circuit_registry_free(reg);
    vf_config_free(&cfg);
}

Test(ordering_ok, circuit_round_trips_every_key)
{
    vf_config cfg;
    const vf_tenant_config *t = load_tenant(&cfg,
        "circuit = { failure_threshold = 0; window = 64; min_samples = 64; failure_rate = 1;\n"
        "    cooldown_ms = 86400000; probe_lease_ms = 1L; ewma_alpha = 1; max_domains = 4096; };");
    cr_assert(t->has_circuit);
    cr_assert_eq(t->circuit.failure_threshold, 0);
    cr_assert_eq(t->circuit.window, 64);
    cr_assert_eq(t->circuit.min_samples, 64);
    cr_assert_float_eq(t->circuit.failure_rate, 1.0, 1e-15, "an integer where a float belongs");
    cr_assert_eq(t->circuit.cooldown_ms, 86400000u);
    cr_assert_eq(t->circuit.probe_lease_ms, 1u);
    cr_assert_float_eq(t->circuit.ewma_alpha, 1.0, 1e-15);
    cr_assert_eq(t->circuit.max_domains, 4096);
    vf_config_free(&cfg);

    t = load_tenant(&cfg, "circuit = { failure_threshold = 7; failure_rate = 0.0; window = 8;\n"
                          "  min_samples = 2; cooldown_ms = 250; probe_lease_ms = 500;\n"
                          "  ewma_alpha = 0.05; max_domains = 3; };");
    cr_assert_eq(t->circuit.failure_threshold, 7);
    cr_assert_float_eq(t->circuit.failure_rate, 0.0, 1e-15);
    cr_assert_eq(t->circuit.window, 8);
    cr_assert_eq(t->circuit.min_samples, 2);
    cr_assert_eq(t->circuit.cooldown_ms, 250);
    cr_assert_eq(t->circuit.probe_lease_ms, 500);
    cr_assert_float_eq(t->circuit.ewma_alpha, 0.05, 1e-15);
    cr_assert_eq(t->circuit.max_domains, 3);
    vf_config_free(&cfg);
}

Test(ordering_ok, circuit_keys_left_out_keep_their_defaults)
{
    vf_circuit_params d;
    vf_circuit_params_default(&d);
    static const char *const blocks[] = { "circuit = { };", "circuit = { window = 30; };" };
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        vf_config cfg;
        const vf_tenant_config *t = load_tenant(&cfg, blocks[i]);
        cr_assert(t->has_circuit, "%s: present, even empty", blocks[i]);
        cr_assert_eq(t->circuit.window, i == 1 ? 30u : d.window);
        cr_assert_eq(t->circuit.failure_threshold, d.failure_threshold);
        cr_assert_eq(t->circuit.min_samples, d.min_samples);
        cr_assert_float_eq(t->circuit.failure_rate, d.failure_rate, 1e-15);
        cr_assert_eq(t->circuit.cooldown_ms, d.cooldown_ms);
        cr_assert_eq(t->circuit.probe_lease_ms, d.probe_lease_ms);
        cr_assert_float_eq(t->circuit.ewma_alpha, d.ewma_alpha, 1e-15);
        cr_assert_eq(t->circuit.max_domains, d.max_domains);
        vf_config_free(&cfg);
    }
}

Test(ordering_ok, tenants_keep_their_own_ordering)
{
    vf_config cfg;
    char err[1024];
    cr_assert_eq(fx_load(&cfg, err, sizeof err,
                         "tenants = (\n"
                         "  { name = \"a\"; uids = [ 1 ]; ordering = { strategy = \"cost\"; budget = 3; };\n"
                         "    circuit = { window = 4; min_samples = 4; }; },\n"
                         "  { name = \"b\"; ordering = { strategy = \"domain\";\n"
                         "    rules = ( { match = [ \"*\" ]; providers = [ \"direct\" ]; } ); }; },\n"
                         "  { name = \"c\"; uids = [ 3 ]; }\n"
                         ");\n"),
                 0, "%s", err);
    cr_assert_eq(cfg.tenants[0].ordering.strategy, VF_ORDER_COST);
    cr_assert_float_eq(cfg.tenants[0].ordering.budget, 3.0, 1e-15);
    cr_assert(cfg.tenants[0].has_circuit);
    cr_assert_eq(cfg.tenants[0].circuit.window, 4);
    cr_assert_eq(cfg.tenants[1].ordering.strategy, VF_ORDER_DOMAIN);
    cr_assert_eq(cfg.tenants[1].ordering.n_rules, 1);
    cr_assert_not(cfg.tenants[1].has_circuit);
    cr_assert_eq(cfg.tenants[2].ordering.strategy, VF_ORDER_STATIC);
    vf_config_free(&cfg);
}

/* ---- ordering errors ---- */

Test(ordering_err, bad_strategy)
{
    fx_expect_error(9, "tenants[0].ordering.strategy: \"fastest\" is not a strategy (\"static\", \"domain\", \"cost\" or \"health\")",
                    ORD_CONF, "ordering = { strategy = \"fastest\"; };");
    fx_expect_error(9, "tenants[0].ordering.strategy: \"Domain\" is not a strategy", ORD_CONF,
                    "ordering = { strategy = \"Domain\"; };");
    fx_expect_error(9, "tenants[0].ordering.strategy: must be a string, not an integer", ORD_CONF,
                    "ordering = { strategy = 1; };");
    fx_expect_error(9, "tenants[0].ordering: must be a group { ... }, not a string", ORD_CONF,
                    "ordering = \"domain\";");
}

Test(ordering_err, unknown_settings)
{
    fx_expect_error(10, "tenants[0].ordering.fallback: unknown setting (expected one of: strategy, skip_unhealthy, rules, unlisted, budget, by_latency)",
                    ORD_CONF, "ordering = { strategy = \"static\";\n    fallback = \"direct\"; };");
    fx_expect_error(9, "tenants[0].ordering.rules[0].weight: unknown setting (expected one of: match, providers)",
                    ORD_CONF,
                    "ordering = { strategy = \"domain\"; rules = ( { match = [ \"*\" ]; providers = [ \"direct\" ]; weight = 2; } ); };");
    fx_expect_error(9, "tenants[0].circuit.threshold: unknown setting (expected one of: failure_threshold, window,",
                    ORD_CONF, "circuit = { threshold = 3; };");
    fx_expect_error(9, "tenants[0].orderings: unknown setting", ORD_CONF, "orderings = { };");
}

Test(ordering_err, settings_of_another_strategy)
{
    fx_expect_error(10, "tenants[0].ordering.rules: only used with strategy \"domain\" (this one is \"cost\")",
                    ORD_CONF, "ordering = { strategy = \"cost\";\n"
                              "    rules = ( { match = [ \"*\" ]; providers = [ \"direct\" ]; } ); };");
    fx_expect_error(9, "tenants[0].ordering.rules: only used with strategy \"domain\" (this one is \"static\")",
                    ORD_CONF, "ordering = { rules = ( { match = [ \"*\" ]; providers = [ \"direct\" ]; } ); };");
    /* Even the empty list and the default value: they would be silently ignored. */
    fx_expect_error(9, "tenants[0].ordering.rules: only used with strategy \"domain\" (this one is \"health\")",
                    ORD_CONF, "ordering = { strategy = \"health\"; rules = (); };");
    fx_expect_error(9, "tenants[0].ordering.unlisted: only used with strategy \"domain\" (this one is \"cost\")",
                    ORD_CONF, "ordering = { strategy = \"cost\"; unlisted = \"append\"; };");
    fx_expect_error(9, "tenants[0].ordering.budget: only used with strategy \"cost\" (this one is \"domain\")",
                    ORD_CONF, "ordering = { strategy = \"domain\"; budget = 1.0;"
                              " rules = ( { match = [ \"*\" ]; providers = [ \"direct\" ]; } ); };");
    fx_expect_error(9, "tenants[0].ordering.by_latency: only used with strategy \"health\" (this one is \"static\")",
                    ORD_CONF, "ordering = { by_latency = false; };");
    fx_expect_error(9, "tenants[0].ordering.skip_unhealthy: strategy \"health\" always skips providers whose circuit is open",
                    ORD_CONF, "ordering = { strategy = \"health\"; skip_unhealthy = false; };");
}

Test(ordering_err, domain_needs_rules)
{
    fx_expect_error(9, "tenants[0].ordering.rules: strategy \"domain\" needs at least one rule", ORD_CONF,
                    "ordering = { strategy = \"domain\"; };");
    fx_expect_error(10, "tenants[0].ordering.rules: strategy \"domain\" needs at least one rule", ORD_CONF,
                    "ordering = { strategy = \"domain\";\n    rules = ( ); };");
}

#define TWO_RULES(second)                                                            \
    "ordering = { strategy = \"domain\";\n"                                          \
    "    rules = (\n"                                                                \
    "      { match = [ \"*.example.com\" ]; providers = [ \"direct\" ]; },\n"       \
    "      { match = [ \"*\" ];\n"                                                   \
    "        " second " }\n"                                                         \
    "    ); };"

Test(ordering_err, bad_rule_providers)
{
    fx_expect_error(13, "tenants[0].ordering.rules[1].providers[1]: unknown provider \"nope\"", ORD_CONF,
                    TWO_RULES("providers = [ \"cheap\", \"nope\" ];"));
    fx_expect_error(13, "tenants[0].ordering.rules[1].providers[2]: \"cheap\" is listed twice", ORD_CONF,
                    TWO_RULES("providers = [ \"cheap\", \"direct\", \"cheap\" ];"));
    fx_expect_error(13, "tenants[0].ordering.rules[1].providers: needs 1..32 provider names", ORD_CONF,
                    TWO_RULES("providers = [ ];"));
    fx_expect_error(13, "tenants[0].ordering.rules[1].providers[0]: must be a string, not an integer", ORD_CONF,
                    TWO_RULES("providers = [ 1 ];"));
    fx_expect_error(12, "tenants[0].ordering.rules[1].providers: missing (a rule needs match and providers)",
                    ORD_CONF, TWO_RULES(""));
    fx_expect_error(13, "tenants[0].ordering.rules[1].providers: must be an array [ ... ] or list ( ... ), not a string",
                    ORD_CONF, TWO_RULES("providers = \"direct\";"));
    /* A provider of another tenant is unknown here. */
    fx_expect_error(3, "tenants[1].ordering.rules[0].providers[0]: unknown provider \"fetcher\"",
                    "tenants = ( { name = \"a\"; uids = [ 1 ]; providers = ( { name = \"fetcher\"; kind = \"direct\"; } ); },\n"
                    "  { name = \"b\"; ordering = { strategy = \"domain\"; rules = ( { match = [ \"*\" ];\n"
                    "      providers = [ \"fetcher\" ]; } ); }; } );\n");
}

Test(ordering_err, bad_rule_patterns)
{
    fx_expect_error(10, "tenants[0].ordering.rules[0].match[1]: \"*.*.com\" is not a host pattern", ORD_CONF,
                    "ordering = { strategy = \"domain\";\n"
                    "  rules = ( { match = [ \"ok.com\", \"*.*.com\" ]; providers = [ \"direct\" ]; } ); };");
    fx_expect_error(10, "tenants[0].ordering.rules[0].match[0]: \"https://x.com/\" is not a host pattern", ORD_CONF,
                    "ordering = { strategy = \"domain\";\n"
                    "  rules = ( { match = [ \"https://x.com/\" ]; providers = [ \"direct\" ]; } ); };");
    fx_expect_error(10, "tenants[0].ordering.rules[0].match: needs 1..64 host patterns", ORD_CONF,
                    "ordering = { strategy = \"domain\";\n"
                    "  rules = ( { match = [ ]; providers = [ \"direct\" ]; } ); };");
    fx_expect_error(10, "tenants[0].ordering.rules[0].match: missing (a rule needs match and providers)", ORD_CONF,
                    "ordering = { strategy = \"domain\";\n  rules = ( { providers = [ \"direct\" ]; } ); };");
    fx_expect_error(10, "tenants[0].ordering.rules[0]: must be a group { ... }, not a string", ORD_CONF,
                    "ordering = { strategy = \"domain\";\n  rules = ( \"*\" ); };");

    char many[65 * 8 + 1] = "";
    for (int i = 0; i < 65; i++)
        strcat(many, i ? ", \"a.t\"" : "\"a.t\"");
    char block[1024];
    snprintf(block, sizeof block,
             "ordering = { strategy = \"domain\"; rules = ( { match = [ %s ]; providers = [ \"direct\" ]; } ); };", many);
    fx_expect_error(9, "tenants[0].ordering.rules[0].match: has 65 entries; at most 64 allowed", ORD_CONF, block);
}

Test(ordering_err, unlisted_budget_and_cost_values)
{
    fx_expect_error(10, "tenants[0].ordering.unlisted: must be \"append\" or \"drop\"", ORD_CONF,
                    "ordering = { strategy = \"domain\"; rules = ( { match = [ \"*\" ]; providers = [ \"direct\" ]; } );\n"
                    "    unlisted = \"keep\"; };");
    fx_expect_error(9, "tenants[0].ordering.budget: -0.5 is out of range (0..1e+09)", ORD_CONF,
                    "ordering = { strategy = \"cost\"; budget = -0.5; };");
    fx_expect_error(9, "tenants[0].ordering.budget: -1 is out of range", ORD_CONF,
                    "ordering = { strategy = \"cost\"; budget = -1; };");
    fx_expect_error(9, "tenants[0].ordering.budget: must be a number, not a string", ORD_CONF,
                    "ordering = { strategy = \"cost\"; budget = \"0.01\"; };");
    fx_expect_error(9, "tenants[0].ordering.skip_unhealthy: must be a boolean (true or false), not an integer",
                    ORD_CONF, "ordering = { skip_unhealthy = 1; };");
    fx_expect_error(9, "tenants[0].ordering.by_latency: must be a boolean", ORD_CONF,
                    "ordering = { strategy = \"health\"; by_latency = \"yes\"; };");
    /* Provider cost: negative refused whether written as a float or an int. */
    fx_expect_error(4, "tenants[0].providers[0].cost: -0.001 is out of range (0..1e+09)",
                    "tenants = ( {\n  name = \"t\";\n  providers = (\n"
                    "    { name = \"direct\"; kind = \"direct\"; cost = -0.001; }\n  );\n} );\n");
    fx_expect_error(4, "tenants[0].providers[0].cost: -2 is out of range",
                    "tenants = ( {\n  name = \"t\";\n  providers = (\n"
                    "    { name = \"direct\"; kind = \"direct\"; cost = -2; }\n  );\n} );\n");
}

/* ---- circuit errors ---- */

Test(ordering_err, circuit_single_value_ranges)
{
    static const struct { const char *block, *what; } cases[] = {
        { "circuit = { window = 0; };", "tenants[0].circuit.window: 0 is out of range (1..64)" },
        { "circuit = { window = 65; };", "tenants[0].circuit.window: 65 is out of range (1..64)" },
        { "circuit = { min_samples = 0; };", "tenants[0].circuit.min_samples: 0 is out of range (1..64)" },
        { "circuit = { failure_threshold = -1; };", "tenants[0].circuit.failure_threshold: -1 is out of range (0..2147483647)" },
        { "circuit = { failure_rate = 1.5; };", "tenants[0].circuit.failure_rate: 1.5 is out of range (0..1)" },
        { "circuit = { failure_rate = -0.1; };", "tenants[0].circuit.failure_rate: -0.1 is out of range (0..1)" },
        { "circuit = { failure_rate = 2; };", "tenants[0].circuit.failure_rate: 2 is out of range (0..1)" },
        { "circuit = { cooldown_ms = 0; };", "tenants[0].circuit.cooldown_ms: 0 is out of range (1..86400000)" },
        { "circuit = { cooldown_ms = 100000000000L; };", "tenants[0].circuit.cooldown_ms: 100000000000 is out of range (1..86400000)" },
        { "circuit = { probe_lease_ms = -5; };", "tenants[0].circuit.probe_lease_ms: -5 is out of range (1..86400000)" },
        { "circuit = { ewma_alpha = 1.01; };", "tenants[0].circuit.ewma_alpha: 1.01 is out of range (0..1)" },
        { "circuit = { max_domains = 0; };", "tenants[0].circuit.max_domains: 0 is out of range (1..4096)" },
        { "circuit = { max_domains = 4097; };", "tenants[0].circuit.max_domains: 4097 is out of range (1..4096)" },
        { "circuit = { window = 2.0; };", "tenants[0].circuit.window: must be an integer, not a float" },
        { "circuit = { failure_rate = \"half\"; };", "tenants[0].circuit.failure_rate: must be a number, not a string" },
        { "circuit = 5;", "tenants[0].circuit: must be a group { ... }, not an integer" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        fx_expect_error(9, cases[i].what, ORD_CONF, cases[i].block);
}

Test(ordering_err, circuit_rules_across_values)
{
    /* The validator's findings land on the line of the setting they name. */
    fx_expect_error(11, "tenants[0].circuit.min_samples: must be 1..window", ORD_CONF,
                    "circuit = {\n    window = 5;\n    min_samples = 6;\n  };");
    fx_expect_error(12, "tenants[0].circuit.ewma_alpha: must be in (0, 1]", ORD_CONF,
                    "circuit = {\n    window = 5;\n    min_samples = 5;\n    ewma_alpha = 0;\n  };");
    fx_expect_error(12, "tenants[0].circuit.failure_threshold/failure_rate: at least one rule must be on",
                    ORD_CONF, "circuit = {\n    window = 5;\n    failure_rate = 0; min_samples = 1;\n"
                              "    failure_threshold = 0;\n  };");
    /* min_samples left at its default (10) no longer fits a window of 5. */
    fx_expect_error(9, "tenants[0].circuit.min_samples: must be 1..window (not set here, so its default is used)",
                    ORD_CONF, "circuit = { window = 5;\n  };");
}
