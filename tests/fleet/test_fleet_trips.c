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

Test(fleet_trips, a_lease_released_with_one_answer_is_free_for_the_next_lookup_on_either_instance)
{
    rp_start(&redis, 0);
    hx_origin_start(&origin, NULL, NULL);
    /* One lookup in flight fleet-wide: a lease still held when the next lookup
     * asks (released after its answer, or lost) makes that lookup a 429. */
    fl_start_brokers(brokers, 2, &redis,
                     "{ name = \"t\"; uids = [ 0 ]; quota = { concurrent = 1; }; ordering = { strategy = \"health\"; };"
                     " cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }",
                     false);
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
