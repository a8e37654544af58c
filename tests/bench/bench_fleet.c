/* Benchmark (issue 17): what the shared state costs per lookup, and how fast
 * a cache hit is. Runs real verifetchd instances against a throwaway
 * redis-server on loopback and a loopback origin:
 *   local   - no `state` (in-process quotas and circuits)
 *   shared  - the same tenant with `state = { redis = ... }`
 * Every request goes over one kept-alive connection per broker
 * (keepalive_client.c), so the client's own cost is small and the same for
 * all rows; GET /v1/health on the same connection is the floor. Rounds are
 * interleaved (local, shared, hit, health, ...) so drift hits every row.
 * Reported: p50/p90 per cache-miss lookup, broker CPU (utime+stime) per
 * lookup, redis-server CPU per lookup, the round trips a lookup waited for
 * (verifetch_state_round_trips_total), and cache-hit latency for a 10 KiB
 * page beside the floor. Run:
 *   meson test -C build --benchmark fleet_bench --verbose
 * Built on the fleet test harness (Criterion), so it starts and reaps
 * everything itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>

#include "tests/bench/keepalive_client.h"
#include "tests/fleet/fl.h"

#define ROUNDS_DEFAULT 300
#define ROUNDS_MAX 3000

/* FLEET_BENCH_ROUNDS (10..3000) for finer CPU figures: CPU is read in clock
 * ticks (10 ms), so 300 rounds resolve 0.033 ms per lookup, 3000 rounds 0.003. */
static int bench_rounds(void)
{
    const char *env = getenv("FLEET_BENCH_ROUNDS");
    int n = env ? atoi(env) : ROUNDS_DEFAULT;
    return n < 10 ? 10 : n > ROUNDS_MAX ? ROUNDS_MAX : n;
}

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

/* One lookup on c for the origin's path; asserts success (and the cache field). */
static double timed_lookup(ka_conn *c, const hx_origin *o, const char *path, const char *want_cache)
{
    char url[512], body[700];
    hx_origin_url(o, false, path, url, sizeof url);
    snprintf(body, sizeof body, "{\"url\": \"%s\"}", url);
    double t0 = hx_now_ms();
    int status = ka_request(c, "POST", "/v1/lookup", body);
    double ms = hx_now_ms() - t0;
    cr_assert_eq(status, 200, "%d %s", status, c->buf ? c->buf : "");
    cr_assert(strstr(c->buf, "\"status\":\"success\""), "%.300s", c->buf);
    if (want_cache) {
        char field[32];
        snprintf(field, sizeof field, "\"cache\":\"%s\"", want_cache);
        cr_assert(strstr(c->buf, field), "want %s: %.300s", field, c->buf);
    }
    return ms;
}

/* The floor: a request on the same connection that touches no lookup. */
static double timed_health(ka_conn *c)
{
    double t0 = hx_now_ms();
    int status = ka_request(c, "GET", "/v1/health", NULL);
    double ms = hx_now_ms() - t0;
    cr_assert_eq(status, 200, "%d %s", status, c->buf ? c->buf : "");
    return ms;
}

/* A counter from the broker's /metrics. */
static double metric(ka_conn *c, const char *name)
{
    cr_assert_eq(ka_request(c, "GET", "/metrics", NULL), 200);
    char needle[128];
    snprintf(needle, sizeof needle, "\n%s ", name);
    const char *p = strstr(c->buf, needle);
    cr_assert(p, "%s not in /metrics", name);
    return atof(p + strlen(needle));
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

/* Server-side time in scripts per lookup since the last CONFIG RESETSTAT
 * (INFO commandstats; a script's time includes the commands it runs, which
 * are also listed by name, so they are not added again), with calls and time
 * per call; then resets. */
static void redis_server_time(redisContext *c, const char *phase, int lookups)
{
    redisReply *r = redisCommand(c, "INFO commandstats");
    cr_assert(r && r->type == REDIS_REPLY_STRING, "INFO commandstats");
    double usec = 0;
    char scripts[256] = "";
    size_t used = 0;
    for (const char *p = strstr(r->str, "cmdstat_"); p; p = strstr(p + 1, "cmdstat_")) {
        char name[48];
        long long calls = 0;
        double total = 0, per = 0;
        if (sscanf(p, "cmdstat_%47[^:]:calls=%lld,usec=%lf,usec_per_call=%lf", name, &calls, &total, &per) != 4)
            continue;
        if (strcmp(name, "evalsha") != 0 && strcmp(name, "eval") != 0)
            continue;
        usec += total;
        if (used < sizeof scripts)
            used += (size_t)snprintf(scripts + used, sizeof scripts - used, " %s %.2f/lookup at %.1f us;", name,
                                     (double)calls / lookups, per);
    }
    freeReplyObject(r);
    printf("  redis-server time in scripts per %s lookup %.1f us (INFO commandstats):%s\n", phase, usec / lookups,
           scripts);
    r = redisCommand(c, "CONFIG RESETSTAT");
    cr_assert(r && r->type == REDIS_REPLY_STATUS, "CONFIG RESETSTAT");
    freeReplyObject(r);
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

/* The old client for comparison: libcurl, a new connection per request, plus
 * the harness's sanitizer-log scan. */
static double curl_ms(const pol_broker *b, const hx_origin *o, const char *path)
{
    double t0 = hx_now_ms();
    hx_response r = path ? fl_lookup(b, 0, o, path, NULL, NULL, 0) : hx_request(&b->hx, "GET", "/v1/health", NULL, 0);
    double ms = hx_now_ms() - t0;
    cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body);
    hx_response_free(&r);
    return ms;
}

Test(fleet_bench, shared_state_overhead_and_cache_hit_latency)
{
    int rounds = bench_rounds();
    rp_redis redis;
    hx_origin origin;
    pol_broker local, shared;
    rp_start(&redis, 0);
    hx_origin_start(&origin, NULL, NULL);
    /* Quota (rate + concurrency) and health ordering: every lookup runs the
     * tenant quota, the lease release, the circuit admit and record and the
     * cache claim and store against the shared store. */
    const char *tenant = "{ name = \"b\"; uids = [ 0 ]; quota = { requests_per_minute = 100000; concurrent = 64; };"
                         " ordering = { strategy = \"health\"; };"
                         " cache = { max_ttl_s = 600; }; " POL_EGRESS_LOOPBACK " }";
    pol_broker_opts lo = { .tenants = tenant };
    pol_broker_start(&local, &lo);
    fl_start_brokers(&shared, 1, &redis, tenant, false);
    ka_conn cl, cs;
    cr_assert_eq(ka_open(&cl, local.hx.socket_path), 0, "connect local");
    cr_assert_eq(ka_open(&cs, shared.hx.socket_path), 0, "connect shared");

    /* Warm both (zygote, connections, script cache). */
    for (int i = 0; i < 5; i++) {
        char path[64];
        snprintf(path, sizeof path, "/page?warm=%d", i);
        timed_lookup(&cl, &origin, path, NULL);
        timed_lookup(&cs, &origin, path, NULL);
    }
    static double lat_local[ROUNDS_MAX], lat_shared[ROUNDS_MAX], paired[ROUNDS_MAX], rtt[ROUNDS_MAX];
    redisContext *probe = redisConnect("127.0.0.1", redis.port);
    cr_assert(probe && !probe->err, "probe connection to redis");
    freeReplyObject(redisCommand(probe, "CONFIG RESETSTAT"));
    double trips0 = metric(&cs, "verifetch_state_round_trips_total");
    long long cmds0 = redis_commands(probe);
    double c0l = cpu_ms(local.hx.pid), c0s = cpu_ms(shared.hx.pid), c0r = cpu_ms(redis.pid);
    for (int i = 0; i < rounds; i++) {
        /* A distinct URL per round: a real fetch (cache miss, then stored) every time. */
        char path[64];
        snprintf(path, sizeof path, "/page?r=%d", i);
        lat_local[i] = timed_lookup(&cl, &origin, path, "miss");
        lat_shared[i] = timed_lookup(&cs, &origin, path, "miss");
        paired[i] = lat_shared[i] - lat_local[i];
        rtt[i] = redis_rtt_ms(probe);
    }
    double cpu_local = (cpu_ms(local.hx.pid) - c0l) / rounds, cpu_shared = (cpu_ms(shared.hx.pid) - c0s) / rounds;
    double cpu_redis = (cpu_ms(redis.pid) - c0r) / rounds;
    /* Minus the probe's own INFO and PINGs. */
    double cmds_per_lookup = (double)(redis_commands(probe) - cmds0 - 1 - rounds) / rounds;
    double trips = (metric(&cs, "verifetch_state_round_trips_total") - trips0) / rounds;
    redis_server_time(probe, "cache-miss", rounds);

    /* Cache hits, 10 KiB page: one miss fills, then hits. On the shared
     * broker a hit is served by its in-process tier, admitted from the pod's
     * slice of the fleet-wide quota (a trip when the slice runs out). */
    const char *page = "/big?bytes=10240";
    timed_lookup(&cs, &origin, page, "miss");
    timed_lookup(&cl, &origin, page, "miss");
    freeReplyObject(redisCommand(probe, "CONFIG RESETSTAT"));
    double trips_h0 = metric(&cs, "verifetch_state_round_trips_total");
    static double hit_local[ROUNDS_MAX], hit_shared[ROUNDS_MAX], floor_local[ROUNDS_MAX], floor_shared[ROUNDS_MAX];
    for (int i = 0; i < rounds; i++) {
        hit_local[i] = timed_lookup(&cl, &origin, page, "hit");
        floor_local[i] = timed_health(&cl);
        hit_shared[i] = timed_lookup(&cs, &origin, page, "hit");
        floor_shared[i] = timed_health(&cs);
    }
    double trips_hit = (metric(&cs, "verifetch_state_round_trips_total") - trips_h0) / rounds;
    redis_server_time(probe, "cache-hit", rounds);
    /* The old client (new connection per request), for comparison with earlier figures. */
    enum { CURL_ROUNDS = 50 };
    static double curl_hit[CURL_ROUNDS], curl_floor[CURL_ROUNDS];
    for (int i = 0; i < CURL_ROUNDS; i++) {
        curl_hit[i] = curl_ms(&local, &origin, page);
        curl_floor[i] = curl_ms(&local, &origin, NULL);
    }
    redisFree(probe);
    ka_close(&cl);
    ka_close(&cs);

    double p50l = pct(lat_local, rounds, 0.5), p90l = pct(lat_local, rounds, 0.9);
    double p50s = pct(lat_shared, rounds, 0.5), p90s = pct(lat_shared, rounds, 0.9);
    printf("fleet_bench: %d interleaved rounds, one kept-alive connection per broker, cache misses forced by distinct URLs\n",
           rounds);
    printf("  cache miss  local  p50 %.3f ms  p90 %.3f ms\n", p50l, p90l);
    printf("  cache miss  shared p50 %.3f ms  p90 %.3f ms  (p50 added %+.3f ms, ratio %.3f;"
           " median of same-round differences %+.3f ms)\n", p50s, p90s, p50s - p50l, p50s / p50l,
           pct(paired, rounds, 0.5));
    double rtt50 = pct(rtt, rounds, 0.5);
    printf("  redis round trips waited per cache-miss lookup %.2f (commands sent incl. those run inside scripts %.2f);"
           " one loopback PING p50 %.3f ms\n", trips, cmds_per_lookup, rtt50);
    printf("  broker CPU per lookup  local %.3f ms  shared %.3f ms  (added %+.3f ms); redis-server %.3f ms\n",
           cpu_local, cpu_shared, cpu_shared - cpu_local, cpu_redis);
    double fl50 = pct(floor_local, rounds, 0.5), fs50 = pct(floor_shared, rounds, 0.5);
    double hl50 = pct(hit_local, rounds, 0.5), hs50 = pct(hit_shared, rounds, 0.5);
    printf("  floor GET /v1/health  local p50 %.3f ms  shared p50 %.3f ms\n", fl50, fs50);
    printf("  cache hit 10 KiB  local  p50 %.3f ms  p90 %.3f ms  (above its floor %+.3f ms)\n", hl50,
           pct(hit_local, rounds, 0.9), hl50 - fl50);
    printf("  cache hit 10 KiB  shared p50 %.3f ms  p90 %.3f ms  (above its floor %+.3f ms; %.2f round trips waited)\n",
           hs50, pct(hit_shared, rounds, 0.9), hs50 - fs50, trips_hit);
    double ch50 = pct(curl_hit, CURL_ROUNDS, 0.5), cf50 = pct(curl_floor, CURL_ROUNDS, 0.5);
    printf("  old client (libcurl, connect per request), local: hit p50 %.3f ms, health p50 %.3f ms (%+.3f ms)\n",
           ch50, cf50, ch50 - cf50);
    fflush(stdout);
    rp_kill(&redis);
}
