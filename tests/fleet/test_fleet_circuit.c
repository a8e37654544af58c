/* E2E shared circuits: failures seen by one instance open the provider's
 * circuit for every instance sharing the store, and after the cooldown only
 * one instance in the fleet gets the half-open probe; a success on any
 * instance ends the fleet's run of failures. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>

#include "broker/fleet/fleet_keys.h"
#include "fl.h"

TestSuite(fleet_circuit, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static rp_redis redis;
static hx_origin origin;
static pol_broker brokers[2];

#define COOLDOWN_MS 1500

/* flaky: an http_api provider on a closed port; steady: direct. Health ordering. */
static void start_pair(const char *extra)
{
    rp_start(&redis, 0);
    hx_origin_start(&origin, NULL, NULL);
    char key[PATH_MAX], tenants[2048];
    pol_key_file("flaky.key", "flaky-provider-key-0123456789", key, sizeof key);
    pol_fmt(tenants, sizeof tenants,
            "{ name = \"c\"; uids = [ 0 ]; " POL_EGRESS_LOOPBACK
            " providers = ( { name = \"flaky\"; kind = \"http_api\"; endpoint = \"http://127.0.0.1:%d/fetch?u={url}\";"
            "   credential = { header = \"X-Api-Key\"; key_file = \"%s\"; }; },"
            " { name = \"steady\"; kind = \"direct\"; } );"
            " ordering = { strategy = \"health\"; };"
            " circuit = { failure_threshold = 2; cooldown_ms = %d; }; %s }",
            hx_closed_port(), key, COOLDOWN_MS, extra);
    fl_start_brokers(brokers, 2, &redis, tenants, false);
}

/* "flaky,steady" or "steady": the providers the lookup attempted. */
static void expect_attempts(const hx_response *r, const char *order)
{
    char buf[256];
    cr_assert_eq(r->status, 200, "%ld %s", r->status, r->body);
    cr_assert_str_eq(pol_order(r, buf, sizeof buf), order, "attempts; body: %s", r->body);
}

Test(fleet_circuit, failures_on_one_instance_open_the_circuit_for_the_other)
{
    start_pair("");
    for (int i = 0; i < 2; i++) {
        hx_response r = fl_lookup(&brokers[0], 0, &origin, "/page", NULL, NULL, 0);
        expect_attempts(&r, "flaky,steady");
        hx_response_free(&r);
    }
    /* B never saw flaky fail, yet skips it. */
    hx_response r = fl_lookup(&brokers[1], 0, &origin, "/page", NULL, NULL, 0);
    expect_attempts(&r, "steady");
    const char *reason = pol_receipt_str(&r, "provider_order_reason");
    cr_assert(hx_contains_ci(reason, "skipped 'flaky'"), "reason: %s", reason ? reason : "(none)");
    hx_response_free(&r);
    rp_kill(&redis);
}

typedef struct {
    const pol_broker *b;
    bool tried_flaky;
    long status;
} probe_arg;

static void *one_lookup(void *p)
{
    probe_arg *a = p;
    hx_response r = fl_lookup(a->b, 0, &origin, "/page", NULL, NULL, 0);
    char buf[256];
    a->status = r.status;
    a->tried_flaky = r.status == 200 && strstr(pol_order(&r, buf, sizeof buf), "flaky") != NULL;
    hx_response_free(&r);
    return NULL;
}

Test(fleet_circuit, after_the_cooldown_one_probe_goes_fleet_wide)
{
    start_pair("");
    for (int i = 0; i < 2; i++) {
        hx_response r = fl_lookup(&brokers[i], 0, &origin, "/page", NULL, NULL, 0);
        expect_attempts(&r, "flaky,steady");   /* 2 failures across 2 instances = threshold */
        hx_response_free(&r);
    }
    for (int i = 0; i < 2; i++) {
        hx_response r = fl_lookup(&brokers[i], 0, &origin, "/page", NULL, NULL, 0);
        expect_attempts(&r, "steady");
        hx_response_free(&r);
    }
    pol_sleep_ms(COOLDOWN_MS + 200);
    /* Three lookups on each instance at once: exactly one may probe flaky. */
    pthread_t th[6];
    probe_arg args[6];
    for (int i = 0; i < 6; i++) {
        args[i] = (probe_arg){ .b = &brokers[i % 2] };
        pthread_create(&th[i], NULL, one_lookup, &args[i]);
    }
    int probes = 0;
    for (int i = 0; i < 6; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(args[i].status, 200);
        probes += args[i].tried_flaky;
    }
    cr_assert_eq(probes, 1, "%d instances probed flaky after the cooldown (want exactly 1)", probes);
    /* The probe failed: open again for both. */
    for (int i = 0; i < 2; i++) {
        hx_response r = fl_lookup(&brokers[i], 0, &origin, "/page", NULL, NULL, 0);
        expect_attempts(&r, "steady");
        hx_response_free(&r);
    }
    rp_kill(&redis);
}

/* A provider's consecutive failures counted by other pods (planted here under
 * the name the broker gives them) end with a success on any pod: the
 * successful lookup's record deletes the fleet's counter. */
Test(fleet_circuit, a_success_on_one_instance_ends_the_fleets_run_of_failures)
{
    start_pair("cache = { max_ttl_s = 60; };");   /* circuits read on the cache's trip */
    char fails[VF_FLEET_KEY_MAX];
    const char *parts[2] = { "c", "steady" };
    vf_fleet_key(fails, "vftest:", "c", parts, 2, ":fails");
    redisContext *c = redisConnect("127.0.0.1", redis.port);
    cr_assert(c && !c->err, "connect to redis");
    redisReply *r = redisCommand(c, "SET %s 1", fails);
    cr_assert(r && r->type == REDIS_REPLY_STATUS, "plant the failure count");
    freeReplyObject(r);
    hx_response h = fl_lookup(&brokers[1], 0, &origin, "/page", NULL, NULL, 0);
    expect_attempts(&h, "flaky,steady");
    hx_response_free(&h);
    /* Sent before the answer; polled in case the server reads it after ours. */
    long long left = 1;
    for (int i = 0; i < 100 && left; i++) {
        r = redisCommand(c, "EXISTS %s", fails);
        cr_assert(r && r->type == REDIS_REPLY_INTEGER, "EXISTS");
        left = r->integer;
        freeReplyObject(r);
        if (left)
            pol_sleep_ms(10);
    }
    cr_assert_eq(left, 0, "steady's fleet-wide failure count outlived its success");
    redisFree(c);
    rp_kill(&redis);
}
