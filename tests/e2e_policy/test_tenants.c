/* E2E: tenants by unix peer uid (SO_PEERCRED) get their own provider order,
 * receipts and metrics; an unmapped uid is refused with 403 JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "pol.h"

TestSuite(tenants, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

#define UID_B      65534u   /* nobody */
#define UID_NONE   65533u   /* mapped to no tenant, and there is no catch-all */

static hx_origin origin;
static pol_broker broker;
static pol_broker_opts opts;

#define TWO_TENANTS(bravo_uid) \
    "{ name = \"alpha\"; uids = [ 0 ]; " POL_EGRESS_LOOPBACK \
    "  providers = ( { name = \"p1\"; kind = \"direct\"; }, { name = \"p2\"; kind = \"direct\"; } ); },\n" \
    "{ name = \"bravo\"; uids = [ " bravo_uid " ]; " POL_EGRESS_LOOPBACK \
    "  providers = ( { name = \"p2\"; kind = \"direct\"; }, { name = \"p1\"; kind = \"direct\"; } ); }"

/* alpha (root): p1 then p2; bravo (nobody): p2 then p1. Same two direct providers. */
static void start_two_tenants(void)
{
    hx_origin_start(&origin, NULL, NULL);
    opts = (pol_broker_opts){ .world_socket = true, .tenants = TWO_TENANTS("65534") };
    pol_broker_start(&broker, &opts);
}

/* JSON body of a lookup of the origin's path (static buffer). */
static const char *lookup_body(const char *path)
{
    static char body[512];
    char url[256];
    pol_fmt(body, sizeof body, "{\"url\": \"%s\"}", hx_origin_url(&origin, false, path, url, sizeof url));
    return body;
}

/* The same lookup as root, the tenant alpha. */
static hx_response lookup_as_root(const char *path)
{
    char url[256];
    return pol_lookup(&broker, hx_origin_url(&origin, false, path, url, sizeof url), NULL);
}

/* A failing page makes every provider show up in attempts_log, in order. */
static void expect_failed_order(const hx_response *r, const char *first, const char *second,
                                const char *tenant)
{
    hx_receipt_expect e = {
        .ok = false, .max_attempts = -1, .providers_available = 2,
        .failure_reason = "all_providers_failed", .n_attempts = 2,
        .attempts = { { .provider = first, .outcome = "http_error", .http_status = 500 },
                      { .provider = second, .outcome = "http_error", .http_status = 500 } },
    };
    free(hx_check_tool_result(r, &e));
    cr_assert_str_eq(pol_receipt_str(r, "tenant"), tenant, "receipt tenant; body: %s", r->body);
}

static void expect_served_by(const hx_response *r, const char *provider, const char *tenant)
{
    hx_receipt_expect e = {
        .ok = true, .max_attempts = -1, .providers_available = 2, .n_attempts = 1,
        .attempts = { { .provider = provider, .outcome = "ok", .http_status = 200 } },
    };
    free(hx_check_tool_result(r, &e));
    cr_assert_str_eq(pol_receipt_str(r, "provider_used"), provider);
    cr_assert_str_eq(pol_receipt_str(r, "tenant"), tenant, "receipt tenant; body: %s", r->body);
}

Test(tenants, each_uid_gets_its_tenants_provider_order)
{
    start_two_tenants();
    char order[128];

    hx_response a = lookup_as_root("/500");
    expect_failed_order(&a, "p1", "p2", "alpha");
    hx_response_free(&a);
    hx_response b = pol_request_as(&broker, UID_B, "POST", "/v1/lookup", lookup_body("/500"));
    expect_failed_order(&b, "p2", "p1", "bravo");
    cr_assert_str_eq(pol_order(&b, order, sizeof order), "p2,p1");
    hx_response_free(&b);

    hx_response a_ok = lookup_as_root("/page");
    expect_served_by(&a_ok, "p1", "alpha");
    hx_response_free(&a_ok);
    hx_response b_ok = pol_request_as(&broker, UID_B, "POST", "/v1/lookup", lookup_body("/page"));
    expect_served_by(&b_ok, "p2", "bravo");
    hx_response_free(&b_ok);
}

Test(tenants, unmapped_uid_is_forbidden_before_any_fetch)
{
    start_two_tenants();
    const char *paths[] = { "/v1/lookup", "/metrics", "/v1/tool-spec", "/v1/health" };
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        bool lookup = i == 0;
        hx_response r = pol_request_as(&broker, UID_NONE, lookup ? "POST" : "GET", paths[i],
                                       lookup ? lookup_body("/page") : NULL);
        cr_assert_eq(r.status, 403, "%s as uid %u: HTTP %ld, body %s", paths[i], UID_NONE, r.status,
                     r.body);
        json_t *err = json_object_get(r.json, "error");
        cr_assert(json_is_object(err), "403 body is not a JSON error: %s", r.body);
        cr_assert(hx_contains_ci(json_string_value(json_object_get(err, "message")), "tenant"),
                  "403 message should say the caller has no tenant: %s", r.body);
        cr_assert_null(json_object_get(r.json, "content"), "a refused caller got a ToolResult");
        hx_response_free(&r);
    }
    cr_assert_eq(hx_origin_connections(&origin), 0, "an unmapped caller's lookup reached the origin");
    /* The mapped uid on the same socket still works. */
    hx_response ok = pol_request_as(&broker, UID_B, "GET", "/v1/health", NULL);
    cr_assert_eq(ok.status, 200, "nobody's health: %ld %s", ok.status, ok.body);
    hx_response_free(&ok);
}

Test(tenants, metrics_show_only_the_callers_tenant)
{
    start_two_tenants();
    hx_response a = lookup_as_root("/page");
    cr_assert_eq(a.status, 200);
    hx_response_free(&a);

    hx_response mb = pol_request_as(&broker, UID_B, "GET", "/metrics", NULL);
    cr_assert_eq(mb.status, 200, "bravo /metrics: %ld %s", mb.status, mb.body);
    cr_assert(strstr(mb.body, "tenant=\"bravo\""), "bravo sees no series of its own:\n%s", mb.body);
    cr_assert_null(strstr(mb.body, "alpha"), "bravo's /metrics names tenant alpha:\n%s", mb.body);
    cr_assert_eq(pol_metric(mb.body, "verifetch_lookups_total{tenant=\"bravo\",status=\"success\"}"), 0);
    hx_response_free(&mb);

    hx_response ma = hx_request(&broker.hx, "GET", "/metrics", NULL, 0);
    cr_assert_eq(ma.status, 200);
    cr_assert_eq(pol_metric(ma.body, "verifetch_lookups_total{tenant=\"alpha\",status=\"success\"}"), 1,
                 "alpha's own count:\n%s", ma.body);
    cr_assert_null(strstr(ma.body, "bravo"), "alpha's /metrics names tenant bravo:\n%s", ma.body);
    hx_response_free(&ma);
}

/* The uid map is policy too: after a reload moves bravo to another uid, the
 * old uid is refused and the new one is bravo. */
Test(tenants, reload_remaps_uids)
{
    start_two_tenants();
    opts.tenants = TWO_TENANTS("65533");
    cr_assert(pol_reload(&broker, &opts, NULL), "reload rejected: %s", hx_broker_log(&broker.hx));
    hx_response old_uid = pol_request_as(&broker, UID_B, "POST", "/v1/lookup", lookup_body("/page"));
    cr_assert_eq(old_uid.status, 403, "uid %u after the reload: %ld %s", UID_B, old_uid.status, old_uid.body);
    hx_response_free(&old_uid);
    hx_response new_uid = pol_request_as(&broker, UID_NONE, "POST", "/v1/lookup", lookup_body("/page"));
    expect_served_by(&new_uid, "p2", "bravo");
    hx_response_free(&new_uid);
}
