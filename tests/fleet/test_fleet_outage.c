/* E2E store outage: killing the shared redis-server mid-run never fails a
 * lookup (local state takes over), readiness says "degraded", the failures
 * are counted, and the instances recover on their own when it returns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fl.h"

TestSuite(fleet_outage, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static rp_redis redis;
static hx_origin origin;
static pol_broker brokers[2];

static void expect_success(const hx_response *r)
{
    cr_assert_eq(r->status, 200, "%ld %s", r->status, r->body);
    const char *st = json_string_value(json_object_get(r->json, "status"));
    cr_assert(st && strcmp(st, "success") == 0, "lookup failed: %s", r->body);
}

static long long backend_errors(const pol_broker *b)
{
    hx_response m = hx_request(&b->hx, "GET", "/metrics", NULL, 0);
    long long v = pol_metric(m.body, "verifetch_state_backend_errors_total");
    hx_response_free(&m);
    return v;
}

static bool wait_state(const pol_broker *b, const char *want, unsigned ms)
{
    for (unsigned waited = 0; waited <= ms; waited += 100) {
        char *s = fl_state(b);
        bool ok = strcmp(s, want) == 0;
        free(s);
        if (ok)
            return true;
        pol_sleep_ms(100);
    }
    return false;
}

Test(fleet_outage, lookups_survive_a_store_outage_and_readiness_recovers)
{
    fl_start_fleet(&redis, &origin, brokers, 2,
                   "{ name = \"o\"; uids = [ 0 ]; quota = { requests_per_minute = 1000; concurrent = 8; };"
                   " cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }",
                   false);
    for (int i = 0; i < 2; i++) {
        hx_response r = fl_lookup(&brokers[i], 0, &origin, "/page", NULL, NULL, 0);
        expect_success(&r);
        hx_response_free(&r);
        cr_assert(wait_state(&brokers[i], "ok", 2000), "instance %d not ok with redis up", i);
    }
    cr_assert_eq(backend_errors(&brokers[0]), 0);

    int port = redis.port;
    rp_kill(&redis);
    /* Every lookup still succeeds: quotas, circuits and the cache run locally. */
    for (int i = 0; i < 6; i++) {
        hx_response r = fl_lookup(&brokers[i % 2], 0, &origin, i < 3 ? "/page" : "/slow?ms=10", NULL, NULL, 0);
        expect_success(&r);
        hx_response_free(&r);
    }
    /* Past the life of any quota slice taken before: hits admitted locally. */
    pol_sleep_ms(1200);
    for (int i = 0; i < 4; i++) {
        hx_response r = fl_lookup(&brokers[i % 2], 0, &origin, "/page", NULL, NULL, 0);
        expect_success(&r);
        cr_assert_str_eq(fl_cache_field(&r), "hit", "%s", r.body);
        hx_response_free(&r);
    }
    for (int i = 0; i < 2; i++) {
        cr_assert(wait_state(&brokers[i], "degraded", 2000), "instance %d does not report degraded", i);
        cr_assert_gt(backend_errors(&brokers[i]), 0, "instance %d counted no backend error", i);
    }

    rp_start(&redis, port);
    for (int i = 0; i < 2; i++)
        cr_assert(wait_state(&brokers[i], "ok", 5000), "instance %d did not recover", i);
    /* Shared again: one instance's fetch is the other's hit. */
    hx_response a = fl_lookup(&brokers[0], 0, &origin, "/slow?ms=20", NULL, NULL, 0);
    hx_response b = fl_lookup(&brokers[1], 0, &origin, "/slow?ms=20", NULL, NULL, 0);
    expect_success(&a);
    expect_success(&b);
    cr_assert_str_eq(fl_cache_field(&b), "hit", "%s", b.body);
    hx_response_free(&a);
    hx_response_free(&b);
    rp_kill(&redis);
}
