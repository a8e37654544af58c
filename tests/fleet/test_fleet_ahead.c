/* E2E: a lookup's admission trip is sent before its thread starts, and the
 * thread waits for the verdict before anything else: a lookup the fleet's
 * quota refuses (rate or concurrency) never reaches the origin, and an
 * admission the store gave but this pod's own share then refused gives its
 * token back, so the fleet still admits exactly its budget. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fl.h"

TestSuite(fleet_ahead, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static rp_redis redis;
static hx_origin origin;
static pol_broker brokers[2];

static int origin_saw(const char *path)
{
    char needle[96];
    snprintf(needle, sizeof needle, "GET %s ", path);
    return fl_origin_requests(&origin, needle);
}

/* An answer to a lookup of path: 200 (success) or 429 (with Retry-After). */
static bool judged(const char *path, hx_response *r, const char *ra)
{
    bool ok = r->status == 200;
    if (ok) {
        const char *st = json_string_value(json_object_get(r->json, "status"));
        cr_assert(st && strcmp(st, "success") == 0, "%s: %s", path, r->body);
    } else {
        cr_assert_eq(r->status, 429, "%s: %ld %s", path, r->status, r->body);
        cr_assert_geq(atoi(ra), 1, "%s: no Retry-After", path);
    }
    hx_response_free(r);
    return ok;
}

/* One lookup of path on broker i, judged. */
static bool admitted(int i, const char *path)
{
    char ra[32] = "";
    hx_response r = fl_lookup(&brokers[i], 0, &origin, path, NULL, ra, sizeof ra);
    return judged(path, &r, ra);
}

static bool held_admitted(fl_held *h)
{
    fl_hold_join(h);
    return judged(h->path, &h->r, h->retry_after);
}

Test(fleet_ahead, a_lookup_the_fleet_rate_refuses_never_reaches_the_origin)
{
    /* A written concurrency (fleet-wide), health ordering and a cache: the
     * trip carries the quota, the cache claim and the circuit reads. */
    fl_start_fleet(&redis, &origin, brokers, 2,
                     "{ name = \"r\"; uids = [ 0 ]; quota = { requests_per_minute = 4; concurrent = 8; };"
                     " ordering = { strategy = \"health\"; }; cache = { max_ttl_s = 600; }; " POL_EGRESS_LOOPBACK " }",
                     false);
    int ok = 0;
    for (int i = 0; i < 10; i++) {
        char path[32];
        snprintf(path, sizeof path, "/page?r=%d", i);   /* distinct: never a cache hit */
        bool in = admitted(i % 2, path);
        ok += in;
        cr_assert_eq(origin_saw(path), in ? 1 : 0, "%s was %s but the origin saw it %d times", path,
                     in ? "admitted" : "refused", origin_saw(path));
    }
    cr_assert_eq(ok, 4, "the fleet admitted %d of a 4/min budget", ok);
    rp_kill(&redis);
}

Test(fleet_ahead, a_lookup_the_fleet_concurrency_refuses_never_reaches_the_origin)
{
    fl_start_fleet(&redis, &origin, brokers, 2,
                   "{ name = \"c\"; uids = [ 0 ]; quota = { requests_per_minute = 1000; concurrent = 1; };"
                     " cache = { max_ttl_s = 600; }; " POL_EGRESS_LOOPBACK " }",
                     false);
    fl_held slow = { .b = &brokers[0], .o = &origin, .path = "/slow?ms=1500&held=1" };
    fl_hold_start(&slow);
    cr_assert(pol_origin_saw(&origin, "GET /slow?ms=1500&held=1", 5000), "the slow lookup never reached the origin");
    for (int i = 0; i < 6; i++) {
        char path[32];
        snprintf(path, sizeof path, "/page?c=%d", i);
        cr_assert(!admitted(i % 2, path), "%s was admitted past a fleet concurrency of 1", path);
        cr_assert_eq(origin_saw(path), 0, "refused %s reached the origin", path);
    }
    cr_assert(held_admitted(&slow), "the held lookup failed");
    cr_assert(admitted(1, "/page?c=after"), "the slot is free again");
    cr_assert_eq(origin_saw("/page?c=after"), 1);
    rp_kill(&redis);
}

/* Two tenants share 2 worker slots: each has a per-pod share of 1, and the
 * rate (6/min) is fleet-wide. A burst of slow lookups on one pod: the store
 * may admit several (their trips sent before the first took the share)
 * before this pod's share refuses all but one; each such refusal gives its
 * token back, so the fleet still admits 6 in all. */
Test(fleet_ahead, a_pods_own_share_refusing_after_the_store_admitted_gives_the_token_back)
{
    rp_start(&redis, 0);
    hx_origin_start(&origin, NULL, NULL);
    fl_start_two_slot_pair(brokers, &redis, "quota = { requests_per_minute = 6; };");
    int ok = admitted(0, "/page?first=1");   /* the pod's store connection is up before the burst */
    for (int round = 0; round < 2; round++) {   /* how many go ahead of the share is a race: twice */
        enum { BURST = 6 };
        fl_held burst[BURST];
        for (int i = 0; i < BURST; i++) {
            burst[i] = (fl_held){ .b = &brokers[0], .o = &origin };
            snprintf(burst[i].path, sizeof burst[i].path, "/slow?ms=800&burst=%d.%d", round, i);
            fl_hold_start(&burst[i]);
        }
        int burst_ok = 0;
        for (int i = 0; i < BURST; i++) {
            bool in = held_admitted(&burst[i]);
            burst_ok += in;
            cr_assert_eq(origin_saw(burst[i].path), in ? 1 : 0, "%s: admitted %d, origin saw it %d times",
                         burst[i].path, in, origin_saw(burst[i].path));
        }
        cr_assert_eq(burst_ok, 1, "a per-pod share of 1 admitted %d of a burst", burst_ok);
        ok += burst_ok;
    }
    for (int i = 0; i < 8; i++) {
        char path[32];
        snprintf(path, sizeof path, "/page?after=%d", i);
        ok += admitted(1, path);
    }
    cr_assert_eq(ok, 6, "the fleet admitted %d of a 6/min budget: a refused burst kept tokens", ok);
    rp_kill(&redis);
}
