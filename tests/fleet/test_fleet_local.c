/* E2E lookup cache without a shared store: a hit in the broker's own cache is
 * answered at once (no lookup thread, no worker) with exactly what the miss
 * answered, marked as a hit, and still counts against the tenant's quota. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fl.h"

TestSuite(fleet_local, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static hx_origin origin;
static pol_broker broker;

static hx_response lookup(const char *extra, long want_status)
{
    char ra[32] = "";
    hx_response r = fl_lookup(&broker, 0, &origin, "/page?local=1", extra, ra, sizeof ra);
    cr_assert_eq(r.status, want_status, "%ld (want %ld) %s", r.status, want_status, r.body);
    if (want_status == 429)
        cr_assert(atoi(ra) >= 1, "Retry-After '%s'", ra);
    return r;
}

Test(fleet_local, an_in_process_hit_is_the_miss_marked_hit_and_counts_against_the_quota)
{
    hx_origin_start(&origin, NULL, NULL);
    pol_broker_opts o = { .tenants = "{ name = \"l\"; uids = [ 0 ]; quota = { requests_per_minute = 6; };"
                                     " cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }" };
    pol_broker_start(&broker, &o);
    hx_response miss = lookup(NULL, 200);
    cr_assert_str_eq(fl_cache_field(&miss), "miss", "%s", miss.body);
    for (int i = 0; i < 2; i++) {
        hx_response hit = lookup(NULL, 200);
        cr_assert_str_eq(fl_cache_field(&hit), "hit", "%s", hit.body);
        /* Apart from the cache field, the very answer the miss gave (fetched_at included). */
        json_object_del(hx_receipt(&hit), "cache");
        json_t *first = json_deep_copy(miss.json);
        json_object_del(json_object_get(json_array_get(json_object_get(first, "content"), 0), "json"), "cache");
        cr_assert(json_is_object(hx_receipt(&hit)) && json_equal(first, hit.json), "hit %s\nmiss %s", hit.body,
                  miss.body);
        json_decref(first);
        hx_response_free(&hit);
    }
    /* max_age_s = 0 still fetches. */
    hx_response fresh = lookup(", \"max_age_s\": 0", 200);
    cr_assert_str_eq(fl_cache_field(&fresh), "bypass", "%s", fresh.body);
    cr_assert_eq(fl_origin_requests(&origin, "GET /page?local=1 "), 2);
    hx_response_free(&fresh);
    /* Lookups 5 and 6 are hits; the 7th, hit or not, is over the quota. */
    for (int i = 0; i < 2; i++) {
        hx_response hit = lookup(NULL, 200);
        hx_response_free(&hit);
    }
    hx_response over = lookup(NULL, 429);
    hx_response_free(&over);
    cr_assert_eq(fl_origin_requests(&origin, "GET /page?local=1 "), 2);
    cr_assert(strstr(hx_broker_log(&broker.hx), "\"cache\":\"hit\""), "no hit log line: %s",
              hx_broker_log(&broker.hx));
    hx_response_free(&miss);
}
