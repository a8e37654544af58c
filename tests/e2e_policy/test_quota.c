/* E2E: per-tenant quotas. Over requests_per_minute or over the concurrent
 * limit the broker answers 429 with Retry-After and a JSON error, and the
 * refused lookup never reaches the origin. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "pol.h"

TestSuite(quota, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static hx_origin origin;
static pol_broker broker;

/* Tenant q (root) has the quota under test; tenant other (nobody) the same
 * quota, counted separately. */
static void start_with_quota(const char *quota)
{
    hx_origin_start(&origin, NULL, NULL);
    char tenants[1024];
    pol_fmt(tenants, sizeof tenants,
            /* robots.txt ignored: the tests count origin connections exactly. */
            "{ name = \"q\"; uids = [ 0 ]; robots = \"ignore\"; quota = { %s }; " POL_EGRESS_LOOPBACK " },\n"
            "{ name = \"other\"; uids = [ 65534 ]; quota = { %s }; " POL_EGRESS_LOOPBACK " }",
            quota, quota);
    pol_broker_opts o = { .tenants = tenants, .world_socket = true };
    pol_broker_start(&broker, &o);
}

static hx_response lookup_with_headers(const char *path, char *retry_after, size_t len)
{
    char url[256], body[512];
    pol_fmt(body, sizeof body, "{\"url\": \"%s\"}", hx_origin_url(&origin, false, path, url, sizeof url));
    pol_req q = { .method = "POST", .path = "/v1/lookup", .body = body };
    return pol_http(&broker, &q, retry_after, len);
}

static void expect_ok(const hx_response *r)
{
    hx_receipt_expect e = {
        .ok = true, .max_attempts = -1, .providers_available = 1, .n_attempts = 1,
        .attempts = { { .provider = "direct", .outcome = "ok", .http_status = 200 } },
    };
    free(hx_check_tool_result(r, &e));
}

/* 429, Retry-After >= 1 that matches the JSON, and a message naming the limit. */
static void expect_throttled(const hx_response *r, const char *retry_after, const char *message_part)
{
    cr_assert_eq(r->status, 429, "expected 429, got %ld: %s", r->status, r->body);
    char *end = NULL;
    long secs = strtol(retry_after, &end, 10);
    cr_assert(retry_after[0] && *end == '\0', "Retry-After header missing or not a number: '%s'", retry_after);
    cr_assert_geq(secs, 1, "Retry-After %ld", secs);
    cr_assert_leq(secs, 60, "Retry-After %ld exceeds a minute", secs);
    json_t *err = json_object_get(r->json, "error");
    cr_assert(json_is_object(err), "429 body is not a JSON error: %s", r->body);
    cr_assert(hx_contains_ci(json_string_value(json_object_get(err, "message")), message_part),
              "429 message should mention '%s': %s", message_part, r->body);
    json_t *ra = json_object_get(err, "retry_after");
    if (ra)
        cr_assert_eq(json_integer_value(ra), secs, "JSON retry_after disagrees with the header: %s", r->body);
    cr_assert_null(json_object_get(r->json, "content"), "a throttled lookup carries a ToolResult");
}

Test(quota, third_lookup_in_a_minute_is_throttled)
{
    start_with_quota("requests_per_minute = 2;");
    char ra[32];
    for (int i = 0; i < 2; i++) {
        hx_response r = lookup_with_headers("/page", ra, sizeof ra);
        expect_ok(&r);
        cr_assert_str_eq(ra, "", "an admitted lookup carries Retry-After '%s'", ra);
        hx_response_free(&r);
    }
    hx_response third = lookup_with_headers("/page", ra, sizeof ra);
    expect_throttled(&third, ra, "per-minute");
    hx_response_free(&third);
    cr_assert_eq(hx_origin_connections(&origin), 2, "the throttled lookup reached the origin");

    /* Only lookups are metered; the tenant is still served elsewhere. */
    hx_response h = hx_request(&broker.hx, "GET", "/v1/health", NULL, 0);
    cr_assert_eq(h.status, 200);
    hx_response_free(&h);
    hx_response m = hx_request(&broker.hx, "GET", "/metrics", NULL, 0);
    cr_assert_eq(pol_metric(m.body, "verifetch_lookups_total{tenant=\"q\",status=\"throttled\"}"), 1,
                 "%s", m.body);
    cr_assert_eq(pol_metric(m.body, "verifetch_lookups_total{tenant=\"q\",status=\"success\"}"), 2);
    hx_response_free(&m);

    /* Another tenant's bucket is its own. */
    char url[256], body[512];
    pol_fmt(body, sizeof body, "{\"url\": \"%s\"}", hx_origin_url(&origin, false, "/page", url, sizeof url));
    hx_response other = pol_request_as(&broker, 65534, "POST", "/v1/lookup", body);
    expect_ok(&other);
    cr_assert_str_eq(pol_receipt_str(&other, "tenant"), "other");
    hx_response_free(&other);
}

typedef struct {
    hx_response r;
} slow_call;

static void *slow_lookup(void *arg)
{
    slow_call *c = arg;
    c->r = lookup_with_headers("/slow?ms=1500", NULL, 0);
    return NULL;
}

Test(quota, second_concurrent_lookup_is_throttled)
{
    start_with_quota("concurrent = 1; requests_per_minute = 2;");
    slow_call first;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, slow_lookup, &first), 0);
    bool in_flight = pol_origin_saw(&origin, "REQ GET /slow", 5000);
    char ra[32] = "";
    hx_response second = { 0 };
    if (in_flight)
        second = lookup_with_headers("/page", ra, sizeof ra);
    pthread_join(th, NULL);
    cr_assert(in_flight, "the slow lookup never reached the origin\nstderr: %s", hx_broker_log(&broker.hx));
    expect_throttled(&second, ra, "in flight");
    hx_response_free(&second);
    expect_ok(&first.r);
    hx_response_free(&first.r);
    cr_assert_eq(hx_origin_connections(&origin), 1, "the throttled lookup reached the origin");

    /* The slot is back once the slow lookup ended, and the refused lookup
     * spent no token: one of the two per minute is left. */
    hx_response after = lookup_with_headers("/page", ra, sizeof ra);
    expect_ok(&after);
    hx_response_free(&after);
    hx_response over = lookup_with_headers("/page", ra, sizeof ra);
    expect_throttled(&over, ra, "per-minute");
    hx_response_free(&over);
}
