/* E2E: what the shared store costs a lookup, and that moving its writes off
 * the answer's path loses none of them. Writes nobody waits for (lease
 * release, circuit record, cache store) go out in one write before the answer
 * does, so the next lookup on any instance finds them in the store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fl.h"

TestSuite(fleet_trips, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static rp_redis redis;
static hx_origin origin;
static pol_broker brokers[2];

/* A fresh store and origin, and n instances sharing them with one tenant. */
static void start_fleet(int n, const char *tenant)
{
    fl_start_fleet(&redis, &origin, brokers, n, tenant, false);
}

Test(fleet_trips, a_lease_released_with_one_answer_is_free_for_the_next_lookup_on_either_instance)
{
    /* One lookup in flight fleet-wide: a lease still held when the next lookup
     * asks (released after its answer, or lost) makes that lookup a 429. */
    start_fleet(2, "{ name = \"t\"; uids = [ 0 ]; quota = { concurrent = 1; }; ordering = { strategy = \"health\"; };"
                   " cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }");
    for (int i = 0; i < 24; i++) {
        char path[64], ra[32] = "";
        snprintf(path, sizeof path, "/page?seq=%d", i / 2);   /* each page: a miss on one, a hit on the other */
        hx_response r = fl_lookup(&brokers[i % 2], 0, &origin, path, NULL, ra, sizeof ra);
        cr_assert_eq(r.status, 200, "lookup %d on instance %d: %ld (Retry-After %s) %s", i, i % 2, r.status, ra,
                     r.body);
        cr_assert_str_eq(fl_cache_field(&r), i % 2 ? "hit" : "miss", "lookup %d: %s", i, r.body);
        hx_response_free(&r);
    }
    char *st = fl_state(&brokers[0]);
    cr_assert_str_eq(st, "ok");
    free(st);
    rp_kill(&redis);
}

static long long round_trips(const pol_broker *b)
{
    hx_response r = hx_request(&b->hx, "GET", "/metrics", NULL, 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    const char *p = strstr(r.body, "\nverifetch_state_round_trips_total ");
    cr_assert_not_null(p, "%s", r.body);
    long long n = atoll(p + strlen("\nverifetch_state_round_trips_total "));
    hx_response_free(&r);
    return n;
}

static void lookups(const pol_broker *b, const char *fmt, int n, const char *want_cache)
{
    for (int i = 0; i < n; i++) {
        char path[64];
        snprintf(path, sizeof path, fmt, i);
        hx_response r = fl_lookup(b, 0, &origin, path, NULL, NULL, 0);
        cr_assert_eq(r.status, 200, "%s: %ld %s", path, r.status, r.body);
        cr_assert_str_eq(fl_cache_field(&r), want_cache, "%s: %s", path, r.body);
        hx_response_free(&r);
    }
}

Test(fleet_trips, a_cache_miss_waits_for_one_round_trip_before_its_fetch_and_a_hit_for_none)
{
    /* Everything the store does for a lookup: tenant quota (rate and
     * concurrency), circuits (health ordering), cache claim and store. */
    start_fleet(1, "{ name = \"t\"; uids = [ 0 ]; quota = { requests_per_minute = 10000; concurrent = 8; };"
                   " ordering = { strategy = \"health\"; }; cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }");
    lookups(&brokers[0], "/page?warm=%d", 1, "miss");
    long long before = round_trips(&brokers[0]);
    lookups(&brokers[0], "/page?miss=%d", 10, "miss");
    long long misses = round_trips(&brokers[0]) - before;
    cr_assert_eq(misses, 10, "10 cache misses waited for %lld round trips (quota, claim and circuits are one)", misses);
    /* The misses' trips also reserved this pod a slice of the large fleet
     * bucket: in-process hits spend it without a trip. */
    lookups(&brokers[0], "/page?miss=%d", 10, "hit");
    long long hits = round_trips(&brokers[0]) - before - misses;
    cr_assert_eq(hits, 0, "10 in-process hits waited for %lld round trips (a slice of the quota admits them)", hits);
    rp_kill(&redis);
}
