/* E2E fleet quotas: verifetchd instances sharing one redis-server enforce one
 * tenant quota and one provider-key quota between them (429 + Retry-After
 * as a single instance does), counted atomically by a Lua script. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "broker/fleet/fleet_keys.h"
#include "fl.h"

TestSuite(fleet_quota, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static rp_redis redis;
static hx_origin origin;
static pol_broker brokers[FL_MAX_BROKERS];

Test(fleet_quota, tenant_quota_of_ten_per_minute_admits_exactly_ten_across_three_instances)
{
    fl_start_fleet(&redis, &origin, brokers, 3,
                   "{ name = \"q\"; uids = [ 0 ]; quota = { requests_per_minute = 10; }; " POL_EGRESS_LOOPBACK " }",
                   false);
    /* 3 instances x 8 concurrent-ish lookups = 24 asks for 10 tokens. */
    fl_tally t = fl_ask_together(brokers, 3, &origin, "/page", 8);
    int ok = t.ok, throttled = t.throttled, other = t.other;
    cr_assert_eq(other, 0, "%d lookups neither succeeded nor were throttled", other);
    cr_assert_eq(ok, 10, "fleet admitted %d lookups against a shared 10/min quota", ok);
    cr_assert_eq(throttled, 14);
    cr_assert_eq(fl_origin_requests(&origin, "GET /page "), 10, "refused lookups must not reach the origin");
    rp_kill(&redis);
}

/* One key shared by two tenants on two instances: 4 per minute in total. */
Test(fleet_quota, provider_key_quota_is_shared_by_every_tenant_and_instance_using_the_key)
{
    rp_start(&redis, 0);
    hx_origin_start(&origin, NULL, NULL);
    char key[PATH_MAX], tenants[2048], provider[768];
    pol_key_file("shared.key", "shared-provider-key-0123456789", key, sizeof key);
    pol_fmt(provider, sizeof provider,
            "providers = ( { name = \"api\"; kind = \"http_api\"; endpoint = \"http://127.0.0.1:%d/page?u={url}\";"
            " credential = { header = \"X-Api-Key\"; key_file = \"%s\"; };"
            " quota = { requests_per_minute = 4; }; } );",
            origin.port, key);
    pol_fmt(tenants, sizeof tenants,
            "{ name = \"a\"; uids = [ 0 ]; %s " POL_EGRESS_LOOPBACK " },\n"
            "{ name = \"b\"; uids = [ 65534 ]; %s " POL_EGRESS_LOOPBACK " }",
            provider, provider);
    fl_start_brokers(brokers, 2, &redis, tenants, true);
    int ok = 0, throttled = 0;
    for (int i = 0; i < 8; i++) {
        const pol_broker *b = &brokers[i % 2];
        uid_t uid = (i / 2) % 2 ? 65534 : 0;
        char ra[32] = "";
        hx_response r = fl_lookup(b, uid, &origin, "/page", NULL, ra, sizeof ra);
        if (r.status == 200) {
            const char *st = json_string_value(json_object_get(r.json, "status"));
            cr_assert(st && strcmp(st, "success") == 0, "lookup %d failed: %s", i, r.body);
            ok++;
        } else {
            cr_assert_eq(r.status, 429, "lookup %d: %ld %s", i, r.status, r.body);
            const char *msg = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
            cr_assert(msg && strstr(msg, "provider key quota"), "429 should name the key quota: %s", r.body);
            json_t *jra = json_object_get(json_object_get(r.json, "error"), "retry_after");
            cr_assert(json_integer_value(jra) >= 1, "no retry_after: %s", r.body);
            if (uid == 0)
                cr_assert(atoi(ra) >= 1, "Retry-After header missing");
            throttled++;
        }
        hx_response_free(&r);
    }
    cr_assert_eq(ok, 4, "the key's 4/min were shared: %d admitted", ok);
    cr_assert_eq(throttled, 4);
    rp_kill(&redis);
}

typedef struct {
    const pol_broker *b;
    const char *path;
    hx_response r;
} slow_lookup;

static void *run_slow(void *p)
{
    slow_lookup *l = p;
    l->r = fl_lookup(l->b, 0, &origin, l->path, NULL, NULL, 0);
    return NULL;
}

/* Two lookups of tenant "a" at once (distinct URLs, so the shared cache
 * cannot fold them into one fetch); returns how many got 429. */
static int concurrent_pair(const pol_broker *first, const pol_broker *second, const char *tag)
{
    char p0[64], p1[64];
    snprintf(p0, sizeof p0, "/slow?ms=1500&%s=0", tag);
    snprintf(p1, sizeof p1, "/slow?ms=1500&%s=1", tag);
    slow_lookup l[2] = { { .b = first, .path = p0 }, { .b = second, .path = p1 } };
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, run_slow, &l[i]);
    int refused = 0;
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        if (l[i].r.status == 429) {
            const char *msg = json_string_value(json_object_get(json_object_get(l[i].r.json, "error"), "message"));
            cr_assert(msg && strstr(msg, "in flight"), "429 should name concurrency: %s", l[i].r.body);
            refused++;
        } else {
            const char *st = json_string_value(json_object_get(l[i].r.json, "status"));
            cr_assert(l[i].r.status == 200 && st && strcmp(st, "success") == 0, "%s lookup %d: %ld %s", tag, i,
                      l[i].r.status, l[i].r.body);
        }
        hx_response_free(&l[i].r);
    }
    return refused;
}

/* The default concurrency of a tenant among several is a fair share of one
 * broker's worker slots (here 2 slots, 2 tenants: 1 each). It guards each
 * pod's slots, so it is counted per pod even when a store is shared: one
 * lookup on each of two pods both run, two on one pod do not. */
Test(fleet_quota, a_default_fair_share_is_counted_per_instance_not_fleet_wide)
{
    rp_start(&redis, 0);
    hx_origin_start(&origin, NULL, NULL);
    fl_start_two_slot_pair(brokers, &redis, NULL);
    cr_assert_eq(concurrent_pair(&brokers[0], &brokers[1], "two-pods"), 0,
                 "a per-pod share was enforced fleet-wide");
    cr_assert_eq(concurrent_pair(&brokers[0], &brokers[0], "one-pod"), 1,
                 "the share must still hold on one pod");
    rp_kill(&redis);
}

/* Without state the same configuration keeps per-instance counts (today's behaviour). */
Test(fleet_quota, without_state_each_instance_counts_alone)
{
    hx_origin_start(&origin, NULL, NULL);
    pol_broker_opts o = {
        .tenants = "{ name = \"q\"; uids = [ 0 ]; quota = { requests_per_minute = 2; }; " POL_EGRESS_LOOPBACK " }",
    };
    pol_broker_start(&brokers[0], &o);
    pol_broker_start(&brokers[1], &o);
    int ok = 0;
    for (int i = 0; i < 6; i++) {
        hx_response r = fl_lookup(&brokers[i % 2], 0, &origin, "/page", NULL, NULL, 0);
        ok += r.status == 200;
        hx_response_free(&r);
    }
    cr_assert_eq(ok, 4, "two lone instances with 2/min each admit 4, got %d", ok);
    char *state = fl_state(&brokers[0]);
    cr_assert_str_eq(state, "local");
    free(state);
}

/* A lease a crashed instance never released (planted under the name the
 * broker gives the tenant's lease set) stops counting once it expires: the
 * admission prunes expired leases when the set is at the limit. An unexpired
 * one still counts (the planted name is the broker's). */
Test(fleet_quota, a_crashed_instances_expired_lease_is_pruned_at_the_limit)
{
    fl_start_fleet(&redis, &origin, brokers, 1,
                   "{ name = \"z\"; uids = [ 0 ]; quota = { concurrent = 1; }; " POL_EGRESS_LOOPBACK " }", false);
    char leases[VF_FLEET_KEY_MAX];
    const char *parts[2] = { "tenant", "z" };
    vf_fleet_key(leases, "vftest:", "q", parts, 2, ":inflight");
    cr_assert_eq(rp_command_int(&redis, "ZADD %s 1 crashed-pod:1", leases), 1, "plant an expired lease");
    hx_response r = fl_lookup(&brokers[0], 0, &origin, "/page?stale=1", NULL, NULL, 0);
    cr_assert_eq(r.status, 200, "an expired lease still counted: %ld %s", r.status, r.body);
    hx_response_free(&r);
    long long left = -1;   /* its own lease's release is sent before the answer: polled, it may be read after ours */
    for (int i = 0; i < 100 && left != 0; i++, pol_sleep_ms(10))
        left = rp_command_int(&redis, "ZCARD %s", leases);
    cr_assert_eq(left, 0, "the expired lease was not pruned");
    cr_assert_eq(rp_command_int(&redis, "ZADD %s 99999999999999 live-pod:1", leases), 1, "plant a live lease");
    char ra[32] = "";
    r = fl_lookup(&brokers[0], 0, &origin, "/page?stale=2", NULL, ra, sizeof ra);
    cr_assert_eq(r.status, 429, "a live lease of another instance did not count: %ld %s", r.status, r.body);
    cr_assert_geq(atoi(ra), 1);
    hx_response_free(&r);
    rp_kill(&redis);
}
