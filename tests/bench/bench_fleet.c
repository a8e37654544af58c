/* Benchmark (issue 17): what the shared state costs per lookup, and how fast
 * a cache hit is. Runs real verifetchd instances against a throwaway
 * redis-server on loopback and a loopback origin:
 *   local   - no `state` (in-process quotas and circuits)
 *   shared  - the same tenant with `state = { redis = ... }`
 * Rounds are interleaved (local, shared, local, ...) so drift hits both.
 * Reported: p50/p90 client latency per lookup, broker CPU (utime+stime) per
 * lookup, redis-server CPU per lookup, and cache-hit latency for a 10 KiB page
 * (shared store and in-process LRU). Run:
 *   meson test -C build --benchmark fleet_bench --verbose
 * Built on the fleet test harness (Criterion), so it starts and reaps
 * everything itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>

#include "tests/fleet/fl.h"

#define ROUNDS 200

TestSuite(fleet_bench, .init = hx_setup, .fini = hx_teardown, .timeout = 300);

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

/* utime + stime of pid in ms (clock ticks from /proc/pid/stat). */
static double cpu_ms(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    cr_assert_not_null(f, "%s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    cr_assert(p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2);
    return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

static double timed_lookup(const pol_broker *b, const hx_origin *o, const char *path, const char *want_cache)
{
    double t0 = hx_now_ms();
    hx_response r = fl_lookup(b, 0, o, path, NULL, NULL, 0);
    double ms = hx_now_ms() - t0;
    cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body);
    const char *st = json_string_value(json_object_get(r.json, "status"));
    cr_assert(st && strcmp(st, "success") == 0, "%s", r.body);
    if (want_cache)
        cr_assert_str_eq(fl_cache_field(&r), want_cache, "%s", r.body);
    hx_response_free(&r);
    return ms;
}

/* Commands redis-server has processed so far (INFO stats), through c. */
static long long redis_commands(redisContext *c)
{
    redisReply *r = redisCommand(c, "INFO stats");
    cr_assert(r && r->type == REDIS_REPLY_STRING, "INFO stats");
    const char *p = strstr(r->str, "total_commands_processed:");
    long long n = p ? atoll(p + strlen("total_commands_processed:")) : -1;
    freeReplyObject(r);
    return n;
}

/* Round trips the broker makes to redis per cache-miss lookup, counted with
 * MONITOR: every line a client sent, leaving out the commands scripts ran
 * inside the server ("[0 lua]"). */
static double round_trips_per_lookup(const pol_broker *b, const hx_origin *o, const rp_redis *redis)
{
    enum { N = 20 };
    redisContext *mon = redisConnect("127.0.0.1", redis->port);
    cr_assert(mon && !mon->err, "monitor connection");
    redisReply *ok = redisCommand(mon, "MONITOR");
    cr_assert(ok && ok->type == REDIS_REPLY_STATUS, "MONITOR");
    freeReplyObject(ok);
    for (int i = 0; i < N; i++) {
        char path[64];
        snprintf(path, sizeof path, "/page?trips=%d", i);
        timed_lookup(b, o, path, "miss");
    }
    redisSetTimeout(mon, (struct timeval){ .tv_sec = 0, .tv_usec = 300 * 1000 });
    int trips = 0;
    void *reply;
    while (redisGetReply(mon, &reply) == REDIS_OK) {
        redisReply *line = reply;
        if (line->type == REDIS_REPLY_STATUS && !strstr(line->str, " lua]"))
            trips++;
        freeReplyObject(line);
    }
    redisFree(mon);
    return (double)trips / N;
}

/* One PING round trip on an open connection: the floor under every command. */
static double redis_rtt_ms(redisContext *c)
{
    double t0 = hx_now_ms();
    redisReply *r = redisCommand(c, "PING");
    double ms = hx_now_ms() - t0;
    cr_assert(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    return ms;
}

/* The same client, the same socket, a request that touches no lookup: the
 * floor a cache hit is compared with. */
static double timed_health(const pol_broker *b)
{
    double t0 = hx_now_ms();
    hx_response r = hx_request(&b->hx, "GET", "/v1/health", NULL, 0);
    double ms = hx_now_ms() - t0;
    cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body);
    hx_response_free(&r);
    return ms;
}

Test(fleet_bench, shared_state_overhead_and_cache_hit_latency)
{
    rp_redis redis;
    hx_origin origin;
    pol_broker local, shared;
    rp_start(&redis, 0);
    hx_origin_start(&origin, NULL, NULL);
    /* Quota (rate + concurrency) and health ordering: every lookup runs the
     * quota script, the lease release, the circuit admit and record scripts. */
    const char *tenant = "{ name = \"b\"; uids = [ 0 ]; quota = { requests_per_minute = 100000; concurrent = 64; };"
                         " ordering = { strategy = \"health\"; };"
                         " cache = { max_ttl_s = 600; }; " POL_EGRESS_LOOPBACK " }";
    pol_broker_opts lo = { .tenants = tenant };
    pol_broker_start(&local, &lo);
    fl_start_brokers(&shared, 1, &redis, tenant, false);

    /* Warm both (zygote, connections, script cache). */
    for (int i = 0; i < 5; i++) {
        timed_lookup(&local, &origin, "/page", NULL);
        timed_lookup(&shared, &origin, "/page", NULL);
    }
    static double lat_local[ROUNDS], lat_shared[ROUNDS], rtt[ROUNDS];
    redisContext *probe = redisConnect("127.0.0.1", redis.port);
    cr_assert(probe && !probe->err, "probe connection to redis");
    long long cmds0 = redis_commands(probe);
    double c0l = cpu_ms(local.hx.pid), c0s = cpu_ms(shared.hx.pid), c0r = cpu_ms(redis.pid);
    double busy_local = 0, busy_shared = 0;
    for (int i = 0; i < ROUNDS; i++) {
        /* A distinct URL per round: a real fetch (cache miss, then stored) every time. */
        char path[64];
        snprintf(path, sizeof path, "/page?r=%d", i);
        double a = cpu_ms(local.hx.pid);
        lat_local[i] = timed_lookup(&local, &origin, path, NULL);
        busy_local += cpu_ms(local.hx.pid) - a;
        double b = cpu_ms(shared.hx.pid);
        lat_shared[i] = timed_lookup(&shared, &origin, path, NULL);
        busy_shared += cpu_ms(shared.hx.pid) - b;
        rtt[i] = redis_rtt_ms(probe);
    }
    /* Minus the probe's own INFO and PINGs. */
    double cmds_per_lookup = (double)(redis_commands(probe) - cmds0 - 1 - ROUNDS) / ROUNDS;
    double cpu_local = (cpu_ms(local.hx.pid) - c0l) / ROUNDS, cpu_shared = (cpu_ms(shared.hx.pid) - c0s) / ROUNDS;
    double cpu_redis = (cpu_ms(redis.pid) - c0r) / ROUNDS;
    (void)busy_local;
    (void)busy_shared;
    double p50l = pct(lat_local, ROUNDS, 0.5), p90l = pct(lat_local, ROUNDS, 0.9);
    double p50s = pct(lat_shared, ROUNDS, 0.5), p90s = pct(lat_shared, ROUNDS, 0.9);

    /* Cache hits, 10 KiB page: one miss fills, then hits (shared store, and local LRU). */
    const char *page = "/big?bytes=10240";
    timed_lookup(&shared, &origin, page, "miss");
    timed_lookup(&local, &origin, page, "miss");
    static double hit_shared[ROUNDS], hit_local[ROUNDS], floor_local[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        hit_local[i] = timed_lookup(&local, &origin, page, "hit");
        hit_shared[i] = timed_lookup(&shared, &origin, page, "hit");
        floor_local[i] = timed_health(&local);
    }
    redisFree(probe);
    printf("fleet_bench: %d interleaved rounds, cache misses forced by distinct URLs\n", ROUNDS);
    printf("  lookup latency  local  p50 %.3f ms  p90 %.3f ms\n", p50l, p90l);
    printf("  lookup latency  shared p50 %.3f ms  p90 %.3f ms  (p50 added %+.3f ms, ratio %.3f)\n", p50s, p90s,
           p50s - p50l, p50s / p50l);
    double rtt50 = pct(rtt, ROUNDS, 0.5);
    double trips = round_trips_per_lookup(&shared, &origin, &redis);
    printf("  redis round trips per cache-miss lookup %.2f (commands incl. those run inside scripts %.2f);"
           " one loopback round trip p50 %.3f ms, so about %.3f ms of the added p50\n",
           trips, cmds_per_lookup, rtt50, trips * rtt50);
    printf("  broker CPU per lookup  local %.3f ms  shared %.3f ms  (added %+.3f ms); redis-server %.3f ms\n",
           cpu_local, cpu_shared, cpu_shared - cpu_local, cpu_redis);
    double floor50 = pct(floor_local, ROUNDS, 0.5);
    printf("  floor: GET /v1/health, same client and socket, p50 %.3f ms\n", floor50);
    printf("  cache hit 10 KiB  in-process LRU p50 %.3f ms  p90 %.3f ms  (above the floor %+.3f ms)\n",
           pct(hit_local, ROUNDS, 0.5), pct(hit_local, ROUNDS, 0.9), pct(hit_local, ROUNDS, 0.5) - floor50);
    printf("  cache hit 10 KiB  shared-state broker p50 %.3f ms  p90 %.3f ms\n", pct(hit_shared, ROUNDS, 0.5),
           pct(hit_shared, ROUNDS, 0.9));
    fflush(stdout);
    rp_kill(&redis);
}
