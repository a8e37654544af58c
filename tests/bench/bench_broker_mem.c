/* One benchmark cell on its own, for comparing builds: the broker's peak RSS
 * during concurrent lookups of the 8 MiB page ("broker peak RSS at 16
 * concurrent 8m lookups" in verifetch-bench), and its RSS once idle after.
 * Each --build gets a fresh broker (and zygote) per round; builds take turns
 * in an order rotated by round, so drift does not favour one.
 *
 *   verifetch-bench-broker-mem --build A [--build B ...] [--rounds N]
 *                              [--concurrency C] [--requests R]
 *
 * The origin, certificates and lookup client are this build's. Exit 1 when a
 * lookup failed (the figure is then marked), 2 on bad usage. */
#include "bench.h"
#include "proc_inspect.h"

#include <curl/curl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_BUILDS 4
#define MAX_ROUNDS 15
#define PAGE_8M_BYTES (8u << 20)

typedef struct {
    const char *dir;
    char broker[BENCH_PATH_MAX], worker[BENCH_PATH_MAX];
    long peak_kib[MAX_ROUNDS], idle_kib[MAX_ROUNDS], start_kib[MAX_ROUNDS];
    unsigned failed[MAX_ROUNDS];
    long median_ms[MAX_ROUNDS];   /* a lookup's median wall time in the round */
} build_under_test;

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s --build DIR [--build DIR ...] [--rounds N] [--concurrency C] [--requests R]\n",
            argv0);
    exit(2);
}

static int absolute(char *out, const char *dir, const char *rel)
{
    char path[BENCH_PATH_MAX];
    bench_path(path, "%s/%s", dir, rel);
    char *r = realpath(path, NULL);
    if (!r || access(r, X_OK) != 0) {
        fprintf(stderr, "broker-mem: %s is not an executable\n", path);
        free(r);
        return -1;
    }
    bench_path(out, "%s", r);
    free(r);
    return 0;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static long median(const long *v, unsigned n)
{
    long s[MAX_ROUNDS];
    memcpy(s, v, n * sizeof *v);
    qsort(s, n, sizeof *s, cmp_long);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* One broker of one build: start, one warm-up lookup (the zygote's pool),
 * reset the peak, the concurrent lookups, then idle. */
static int one_round(build_under_test *b, unsigned round, bench_env *e, const bench_plan *plan)
{
    if (bench_env_start_broker(e, b->broker, b->worker, e->ca_pem) != 0)
        return -1;
    long start_threads = pi_status_kib(e->broker_pid, "Threads");
    bench_target t = { .body_bytes = PAGE_8M_BYTES, .min_text_chars = PAGE_8M_BYTES / 2,
                       .socket_path = e->socket_path, .curl_path = "/usr/bin/curl" };
    snprintf(t.url, sizeof t.url, "http://127.0.0.1:%u/8m", e->plain_port);
    bench_stats warm;
    bench_plan one = { .concurrency = 1, .requests = 1, .time_cap_s = 60 };
    bench_run_cell(&bench_verifetch, &t, &one, &warm);
    b->start_kib[round] = pi_status_kib(e->broker_pid, "VmRSS");
    bench_reset_hwm(e->broker_pid);
    bench_stats st;
    int rc = bench_run_cell(&bench_verifetch, &t, plan, &st);
    b->peak_kib[round] = pi_status_kib(e->broker_pid, "VmHWM");
    b->failed[round] = st.failed + (st.done + st.failed < plan->requests ? 1 : 0);
    b->median_ms[round] = (long)st.median_ms;
    double t0 = bench_now_ms();
    while (pi_status_kib(e->broker_pid, "Threads") > start_threads && bench_now_ms() - t0 < 60000)
        bench_sleep_ms(100);
    bench_sleep_ms(1500); /* the broker trims its heap after a quiet second */
    b->idle_kib[round] = pi_status_kib(e->broker_pid, "VmRSS");
    fprintf(stderr, "broker-mem: round %u %-28s peak %7ld KiB  idle %6ld KiB  (%u ok, %u failed, median %.0f ms)%s%s\n",
            round + 1, b->dir, b->peak_kib[round], b->idle_kib[round], st.done, st.failed, st.median_ms,
            st.first_error[0] ? "  first error: " : "", st.first_error);
    bench_stop(e->broker_pid, 5000);
    e->broker_pid = 0;
    unlink(e->socket_path);
    return rc;
}

int main(int argc, char **argv)
{
    build_under_test builds[MAX_BUILDS];
    unsigned n_builds = 0, rounds = 3, conc = 16, requests = 32;
    static const struct option longs[] = {
        { "build", required_argument, NULL, 'b' }, { "rounds", required_argument, NULL, 'r' },
        { "concurrency", required_argument, NULL, 'c' }, { "requests", required_argument, NULL, 'n' },
        { 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        if (c == 'b' && n_builds < MAX_BUILDS) {
            memset(&builds[n_builds], 0, sizeof builds[0]);
            builds[n_builds++].dir = optarg;
        } else if (c == 'r')
            rounds = (unsigned)strtoul(optarg, NULL, 10);
        else if (c == 'c')
            conc = (unsigned)strtoul(optarg, NULL, 10);
        else if (c == 'n')
            requests = (unsigned)strtoul(optarg, NULL, 10);
        else
            usage(argv[0]);
    }
    if (optind != argc || n_builds == 0 || rounds < 1 || rounds > MAX_ROUNDS || conc < 1 || requests < conc)
        usage(argv[0]);
    char origin[BENCH_PATH_MAX], self[BENCH_PATH_MAX];
    bench_path(self, "%s", argv[0]);
    char *slash = strrchr(self, '/');
    bench_path(origin, "%.*s/verifetch-bench-origin", slash ? (int)(slash - self) : 1, slash ? self : ".");
    for (unsigned i = 0; i < n_builds; i++)
        if (absolute(builds[i].broker, builds[i].dir, "broker/verifetchd") != 0 ||
            absolute(builds[i].worker, builds[i].dir, "worker/verifetch-worker") != 0)
            return 2;
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_ALL);
    bench_env env = { 0 };
    snprintf(env.tmpdir, sizeof env.tmpdir, "/tmp/verifetch-broker-mem.XXXXXX");
    if (!mkdtemp(env.tmpdir) || bench_env_make_certs(&env) != 0 || bench_env_start_origin(&env, origin) != 0) {
        fprintf(stderr, "broker-mem: setup failed (files in %s)\n", env.tmpdir);
        return 1;
    }
    double load = bench_loadavg();
    bench_plan plan = { .concurrency = conc, .requests = requests, .time_cap_s = 240 };
    int failures = 0;
    for (unsigned r = 0; r < rounds; r++)
        for (unsigned j = 0; j < n_builds; j++) {
            build_under_test *b = &builds[(j + r) % n_builds];
            if (one_round(b, r, &env, &plan) != 0)
                failures++;
        }
    bench_env_teardown(&env, failures > 0);
    printf("broker peak RSS at %u concurrent 8m lookups (%u lookups, %u rounds, load average %.1f at start%s)\n",
           conc, requests, rounds, load, load > 0.5 * (double)sysconf(_SC_NPROCESSORS_ONLN) ? ": NOISY" : "");
    for (unsigned i = 0; i < n_builds; i++) {
        build_under_test *b = &builds[i];
        long lo = b->peak_kib[0], hi = b->peak_kib[0];
        unsigned failed = 0;
        for (unsigned r = 0; r < rounds; r++) {
            lo = b->peak_kib[r] < lo ? b->peak_kib[r] : lo;
            hi = b->peak_kib[r] > hi ? b->peak_kib[r] : hi;
            failed += b->failed[r];
        }
        printf("  %-40s peak median %6.1f MiB [%.1f-%.1f]  after warm-up %5.1f MiB  idle after %5.1f MiB"
               "  lookup median %ld ms%s\n",
               b->dir, median(b->peak_kib, rounds) / 1024.0, lo / 1024.0, hi / 1024.0,
               median(b->start_kib, rounds) / 1024.0, median(b->idle_kib, rounds) / 1024.0,
               median(b->median_ms, rounds), failed ? "  (some lookups failed)" : "");
    }
    curl_global_cleanup();
    return failures ? 1 : 0;
}
