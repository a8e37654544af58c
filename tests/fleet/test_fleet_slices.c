/* E2E: an instance admits its in-process cache hits from a slice of the
 * tenant's fleet bucket that its trips reserve (broker/fleet/shared_quota.h),
 * so a hit waits for no store round trip; yet the fleet never admits more
 * than the bucket holds, a small budget is still counted token by token
 * (exactly 10 of 10/min, hits included), and a fleet whose concurrency limit
 * is more than half used gets no slice (each hit asks the store). A slice
 * lives a second from the pod's last trip that found the fleet calm; a trip
 * that finds it busy ends it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fl.h"

TestSuite(fleet_slices, .init = hx_setup, .fini = hx_teardown, .timeout = 50);

static rp_redis redis;
static hx_origin origin;
static pol_broker brokers[FL_MAX_BROKERS];

static long long round_trips(const pol_broker *b)
{
    hx_response m = hx_request(&b->hx, "GET", "/metrics", NULL, 0);
    cr_assert_eq(m.status, 200, "%s", m.body);
    long long n = pol_metric(m.body, "verifetch_state_round_trips_total");
    hx_response_free(&m);
    return n;
}

/* n instances asking per_instance lookups of path at once; returns admitted. */
static int ask_together(int n, const char *path, int per_instance, int *throttled)
{
    fl_tally t = fl_ask_together(brokers, n, &origin, path, per_instance);
    cr_assert_eq(t.other, 0, "%d lookups neither succeeded nor were throttled", t.other);
    *throttled = t.throttled;
    return t.ok;
}

Test(fleet_slices, a_small_budget_admits_exactly_ten_of_ten_per_minute_hits_included)
{
    fl_start_fleet(&redis, &origin, brokers, 3,
                   "{ name = \"q\"; uids = [ 0 ]; quota = { requests_per_minute = 10; };"
                   " cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }",
                   false);
    /* One page: after its first fetch, every admitted lookup is a hit. */
    int throttled = 0;
    int ok = ask_together(3, "/page?small=1", 8, &throttled);
    cr_assert_eq(ok, 10, "the fleet admitted %d lookups against a shared 10/min quota", ok);
    cr_assert_eq(throttled, 14);
    rp_kill(&redis);
}

Test(fleet_slices, hits_spend_slices_without_trips_and_the_fleet_never_admits_more_than_its_bucket)
{
    /* 120/min: a full bucket of 120, refilled by 2 a second. */
    fl_start_fleet(&redis, &origin, brokers, 3,
                   "{ name = \"q\"; uids = [ 0 ]; quota = { requests_per_minute = 120; };"
                   " cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }",
                   false);
    /* The page fetched once and found in the store by the others, one at a
     * time (concurrent first lookups would poll the store while one fetches). */
    double t0 = hx_now_ms();
    for (int i = 0; i < 3; i++) {
        hx_response r = fl_lookup(&brokers[i], 0, &origin, "/page?large=1", NULL, NULL, 0);
        cr_assert_eq(r.status, 200, "%s", r.body);
        hx_response_free(&r);
    }
    long long trips0[3];
    for (int i = 0; i < 3; i++)
        trips0[i] = round_trips(&brokers[i]);
    /* Under half the bucket: all admitted, most without a trip. */
    int throttled = 0;
    int ok = ask_together(3, "/page?large=1", 19, &throttled);
    cr_assert_eq(ok, 57, "%d of 57 admitted from a bucket of 120", ok);
    long long trips = 0;
    for (int i = 0; i < 3; i++)
        trips += round_trips(&brokers[i]) - trips0[i];
    cr_assert_leq(trips, 28, "%lld round trips for 57 admitted hits: hits were not admitted from slices", trips);
    ok += 3;
    /* Then twice what is left: never more than the bucket. */
    int more = ask_together(3, "/page?large=1", 40, &throttled);
    ok += more;
    double secs = (hx_now_ms() - t0) / 1000.0;
    int refilled = (int)(secs * 2.0) + 1;
    cr_assert_leq(ok, 120 + refilled, "the fleet admitted %d of a 120 bucket (+%d refilled in %.1f s)", ok, refilled,
                  secs);
    /* Unspent slice tokens come back only at a pod's next trip: a few may be out. */
    cr_assert_geq(ok, 120 - 3 * 8, "the fleet admitted only %d of a 120 bucket", ok);
    cr_assert_eq(more + throttled, 120);
    rp_kill(&redis);
}

/* 3 of the 4 fleet-wide slots held by slow lookups on instance 1, each
 * seen at the origin before this returns. */
static void hold_three(fl_held held[3], const char *tag)
{
    for (int i = 0; i < 3; i++) {
        held[i] = (fl_held){ .b = &brokers[1], .o = &origin };
        snprintf(held[i].path, sizeof held[i].path, "/slow?ms=1500&%s=%d", tag, i);
        fl_hold_start(&held[i]);
    }
    char seen[64];
    snprintf(seen, sizeof seen, "GET /slow?ms=1500&%s=", tag);
    int waited = 0;
    while (fl_origin_requests(&origin, seen) < 3 && waited < 3000) {
        pol_sleep_ms(10);
        waited += 10;
    }
    cr_assert_lt(waited, 3000, "the slow lookups never reached the origin");
}

static void release_held(fl_held held[3])
{
    for (int i = 0; i < 3; i++) {
        fl_hold_join(&held[i]);
        cr_assert_eq(held[i].r.status, 200, "%s", held[i].r.body);
        hx_response_free(&held[i].r);
    }
}

/* Hits of path on instance i; returns the round trips they waited for. */
static long long hit_trips(int i, const char *path, int n)
{
    long long before = round_trips(&brokers[i]);
    for (int k = 0; k < n; k++) {
        hx_response r = fl_lookup(&brokers[i], 0, &origin, path, NULL, NULL, 0);
        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_str_eq(fl_cache_field(&r), "hit", "%s", r.body);
        hx_response_free(&r);
    }
    return round_trips(&brokers[i]) - before;
}

static void expect_miss(int i, const char *path)
{
    hx_response r = fl_lookup(&brokers[i], 0, &origin, path, NULL, NULL, 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(fl_cache_field(&r), "miss", "%s", r.body);
    hx_response_free(&r);
}


Test(fleet_slices, a_fleet_more_than_half_busy_grants_no_slice_so_each_hit_asks_the_store)
{
    fl_start_fleet(&redis, &origin, brokers, 2,
                   "{ name = \"c\"; uids = [ 0 ]; quota = { requests_per_minute = 100000; concurrent = 4; };"
                   " cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }",
                   false);
    fl_held held[3];
    hold_three(held, "held");
    long long before = round_trips(&brokers[0]);
    expect_miss(0, "/page?busy=1");
    long long trips = round_trips(&brokers[0]) - before + hit_trips(0, "/page?busy=1", 5);
    cr_assert_eq(trips, 6, "1 miss and 5 hits waited for %lld round trips while 3 of 4 slots were busy", trips);
    release_held(held);
    /* Free again: the next trip reserves a slice, and hits go without trips. */
    trips = hit_trips(0, "/page?busy=1", 6);
    cr_assert_eq(trips, 1, "6 hits with the fleet idle waited for %lld round trips", trips);
    rp_kill(&redis);
}

Test(fleet_slices, a_trip_that_finds_the_fleet_busy_ends_a_live_slice)
{
    fl_start_fleet(&redis, &origin, brokers, 2,
                   "{ name = \"c\"; uids = [ 0 ]; quota = { requests_per_minute = 100000; concurrent = 4; };"
                   " cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }",
                   false);
    expect_miss(0, "/page?live=1");
    cr_assert_eq(hit_trips(0, "/page?live=1", 3), 0, "the idle fleet's slice admitted no hit");
    fl_held held[3];
    hold_three(held, "ends");
    expect_miss(0, "/page?live=2");   /* its trip sees 3 of 4 slots busy */
    long long trips = hit_trips(0, "/page?live=1", 3);
    cr_assert_eq(trips, 3, "3 hits after a busy trip waited for %lld round trips: the slice outlived it", trips);
    release_held(held);
    rp_kill(&redis);
}

Test(fleet_slices, a_slice_lives_a_second_from_the_last_trip_that_found_the_fleet_calm)
{
    fl_start_fleet(&redis, &origin, brokers, 1,
                   "{ name = \"c\"; uids = [ 0 ]; quota = { requests_per_minute = 100000; concurrent = 8; };"
                   " cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }",
                   false);
    /* The first miss's trip grants the slice; the later ones renew it. */
    expect_miss(0, "/page?renew=0");
    for (int i = 1; i <= 2; i++) {
        pol_sleep_ms(400);
        char path[32];
        snprintf(path, sizeof path, "/page?renew=%d", i);
        expect_miss(0, path);
    }
    pol_sleep_ms(400);   /* 1.2 s after the grant, 0.4 s after the last trip */
    long long trips = hit_trips(0, "/page?renew=0", 5);
    cr_assert_eq(trips, 0, "5 hits 0.4 s after a calm trip waited for %lld round trips", trips);
    rp_kill(&redis);
}
