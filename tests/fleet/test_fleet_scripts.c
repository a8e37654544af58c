/* E2E: the store's script cache emptied under a running instance (SCRIPT
 * FLUSH, or a restarted server that kept its data) costs no lookup and loses
 * no write. The lookup's own script meets NOSCRIPT and is sent again in full;
 * a deferred write sent by hash (the circuit record) meets it after the answer
 * and is sent again behind SCRIPT LOAD, with no error counted. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>

#include "fl.h"

TestSuite(fleet_scripts, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static rp_redis redis;
static hx_origin origin;
static pol_broker broker;

static long long metric(const char *name)
{
    hx_response m = hx_request(&broker.hx, "GET", "/metrics", NULL, 0);
    long long v = pol_metric(m.body, name);
    hx_response_free(&m);
    return v;
}

/* INFO memory's number_of_cached_scripts. */
static long long cached_scripts(void)
{
    redisContext *c = redisConnect("127.0.0.1", redis.port);
    cr_assert(c && !c->err, "connect to redis");
    redisReply *r = redisCommand(c, "INFO memory");
    cr_assert(r && r->type == REDIS_REPLY_STRING, "INFO memory");
    const char *p = strstr(r->str, "number_of_cached_scripts:");
    long long n = p ? atoll(p + strlen("number_of_cached_scripts:")) : -1;
    freeReplyObject(r);
    redisFree(c);
    return n;
}

static void expect_miss(const char *path)
{
    hx_response r = fl_lookup(&broker, 0, &origin, path, NULL, NULL, 0);
    cr_assert_eq(r.status, 200, "%s: %ld %s", path, r.status, r.body);
    cr_assert_str_eq(fl_cache_field(&r), "miss", "%s: %s", path, r.body);
    hx_response_free(&r);
}

Test(fleet_scripts, a_flushed_script_cache_fails_no_lookup_and_loses_no_deferred_write)
{
    rp_start(&redis, 0);
    hx_origin_start(&origin, NULL, NULL);
    /* Quota, health ordering and cache: the admission script before the
     * fetch; a provider that always fails (a closed port; its circuit never
     * opens), so its failure is recorded by script among the writes after. */
    char key[PATH_MAX], tenants[2048];
    pol_key_file("flaky.key", "flaky-provider-key-0123456789", key, sizeof key);
    pol_fmt(tenants, sizeof tenants,
            "{ name = \"s\"; uids = [ 0 ]; quota = { requests_per_minute = 1000; concurrent = 4; };"
            " providers = ( { name = \"flaky\"; kind = \"http_api\"; endpoint = \"http://127.0.0.1:%d/fetch?u={url}\";"
            "   credential = { header = \"X-Api-Key\"; key_file = \"%s\"; }; },"
            " { name = \"steady\"; kind = \"direct\"; } );"
            " ordering = { strategy = \"health\"; }; circuit = { failure_threshold = 1000; };"
            " cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }",
            hx_closed_port(), key);
    fl_start_brokers(&broker, 1, &redis, tenants, false);
    expect_miss("/page?before=1");
    expect_miss("/page?before=2");   /* reads the first one's write replies */
    cr_assert_eq(cached_scripts(), 2, "admission and circuit record scripts cached");
    cr_assert_eq(metric("verifetch_state_backend_errors_total"), 0);

    rp_command_int(&redis, "SCRIPT FLUSH");
    cr_assert_eq(cached_scripts(), 0);
    expect_miss("/page?after=1");
    /* Its record met NOSCRIPT after the answer and went again behind SCRIPT LOAD. */
    long long n = -1;
    for (int waited = 0; waited < 2000 && n != 2; waited += 20) {
        n = cached_scripts();
        if (n != 2)
            pol_sleep_ms(20);
    }
    cr_assert_eq(n, 2, "both scripts back in the store's cache: %lld", n);
    expect_miss("/page?after=2");   /* reads the resent write's replies */
    expect_miss("/page?after=3");
    cr_assert_eq(metric("verifetch_state_backend_errors_total"), 0, "a write was lost or an error counted");
    char *st = fl_state(&broker);
    cr_assert_str_eq(st, "ok");
    free(st);
    rp_kill(&redis);
}

/* How often redis-server ran EVALSHA (INFO commandstats). */
static long long evalsha_calls(void)
{
    redisContext *c = redisConnect("127.0.0.1", redis.port);
    cr_assert(c && !c->err, "connect to redis");
    redisReply *r = redisCommand(c, "INFO commandstats");
    cr_assert(r && r->type == REDIS_REPLY_STRING, "INFO commandstats");
    const char *p = strstr(r->str, "cmdstat_evalsha:calls=");
    long long n = p ? atoll(p + strlen("cmdstat_evalsha:calls=")) : 0;
    freeReplyObject(r);
    redisFree(c);
    return n;
}

Test(fleet_scripts, a_success_on_circuits_read_closed_runs_no_record_script)
{
    fl_start_fleet(&redis, &origin, &broker, 1,
                   "{ name = \"s\"; uids = [ 0 ]; quota = { requests_per_minute = 1000; };"
                   " ordering = { strategy = \"health\"; }; cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }",
                   false);
    expect_miss("/page?warm=1");
    long long before = evalsha_calls();
    for (int i = 0; i < 5; i++) {
        char path[32];
        snprintf(path, sizeof path, "/page?closed=%d", i);
        expect_miss(path);
    }
    /* One script per lookup (its admission); the record is a plain DEL. */
    cr_assert_eq(evalsha_calls() - before, 5, "%lld scripts for 5 lookups", evalsha_calls() - before);
    cr_assert_eq(metric("verifetch_state_backend_errors_total"), 0);
    rp_kill(&redis);
}
