/* E2E: a cache hit found in the instance's own memory before its quota trip
 * is admitted within the fleet-wide concurrency limit but takes no lease: it
 * ends as soon as it is admitted, so it owes the store no release after its
 * answer. A full limit still refuses it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fl.h"

TestSuite(fleet_hits, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static rp_redis redis;
static hx_origin origin;
static pol_broker brokers[2];

/* How often redis-server ran ZADD (INFO commandstats), inside scripts too. */
static long long zadd_calls(void)
{
    return rp_command_int(&redis, "EVAL %s 0",
                          "local s = redis.call('INFO', 'commandstats')"
                          " return tonumber(string.match(s, 'cmdstat_zadd:calls=(%d+)') or '0')");
}

static hx_response lookup(int i, const char *path)
{
    return fl_lookup(&brokers[i], 0, &origin, path, NULL, NULL, 0);
}

Test(fleet_hits, a_hit_takes_no_lease_but_a_full_concurrency_limit_refuses_it)
{
    fl_start_fleet(&redis, &origin, brokers, 2,
                   "{ name = \"h\"; uids = [ 0 ]; quota = { requests_per_minute = 1000; concurrent = 1; };"
                   " cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }",
                   false);
    hx_response r = lookup(0, "/page?hit=1");
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(fl_cache_field(&r), "miss");
    hx_response_free(&r);
    long long zadd0 = zadd_calls();
    cr_assert_geq(zadd0, 1, "the miss took a lease");
    for (int i = 0; i < 10; i++) {
        r = lookup(0, "/page?hit=1");
        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_str_eq(fl_cache_field(&r), "hit");
        hx_response_free(&r);
    }
    cr_assert_eq(zadd_calls(), zadd0, "10 hits took leases");

    /* The one slot is taken by a slow lookup on the other instance: a hit is refused. */
    fl_held slow = { .b = &brokers[1], .o = &origin, .path = "/slow?ms=1500&hold=1" };
    fl_hold_start(&slow);
    cr_assert(pol_origin_saw(&origin, "GET /slow?ms=1500&hold=1 ", 3000), "the slow lookup never reached the origin");
    r = lookup(0, "/page?hit=1");
    cr_assert_eq(r.status, 429, "a hit past the fleet's concurrency limit: %ld %s", r.status, r.body);
    hx_response_free(&r);
    fl_hold_join(&slow);
    cr_assert_eq(slow.r.status, 200, "%s", slow.r.body);
    hx_response_free(&slow.r);
    r = lookup(0, "/page?hit=1");   /* the slot is free again */
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(fl_cache_field(&r), "hit");
    hx_response_free(&r);
    rp_kill(&redis);
}
