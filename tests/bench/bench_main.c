/* verifetch benchmark driver (issue 6): one run, one loopback origin, three
 * ways to fetch, then memory. See tests/bench/README.md for the method.
 *
 *   verifetch-bench [--build DIR] [--json FILE] [--curl PATH] [--scale F]
 *                   [--text] [--system-ca] [--keep] [--enforce-targets]
 *
 * Exit 0 when every fetch succeeded (targets are reported, not enforced,
 * unless --enforce-targets: then 3 when one is unmet), 1 when a measurement
 * failed, 2 on bad usage or a missing binary.
 */
#include "bench.h"
#include "proc_inspect.h"

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/memory_tune.h"

typedef struct {
    char build[BENCH_PATH_MAX];
    char json[BENCH_PATH_MAX];
    const char *curl;
    double scale;
    unsigned rounds;
    bool text, system_ca, keep, enforce;
} options;

typedef struct {
    char broker[BENCH_PATH_MAX], worker[BENCH_PATH_MAX], origin[BENCH_PATH_MAX], launcher[BENCH_PATH_MAX];
} binaries;

/* Requests per cell and round at scale 1, sized so three rounds of the whole
 * grid stay around 3 minutes on 2 cores. */
static const struct {
    const char *page;
    size_t bytes;
    unsigned conc, warmup, requests;
} plan_table[] = {
    { "10k", 10240, 1, 5, 80 },
    { "10k", 10240, 16, 16, 320 },
    { "1m", 1048576, 1, 2, 16 },
    { "1m", 1048576, 16, 16, 64 },
};
#define CELL_TIME_CAP_S 6.0
#define DEFAULT_ROUNDS 3
#define PAGE_8M_BYTES (8u << 20)
#define WORKER_REPS 3
#define INSITU_LOOKUPS 20
#define CA_COST_REPS 10

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--build DIR] [--json FILE] [--curl PATH] [--scale F] [--rounds N] [--text] "
                    "[--system-ca] [--keep] [--enforce-targets]\n", argv0);
    exit(2);
}

static void parse_options(int argc, char **argv, options *o)
{
    const char *env_build = getenv("VERIFETCH_BUILD_ROOT");
    bench_path(o->build, "%s", env_build && *env_build ? env_build : "build");
    o->json[0] = '\0';
    o->curl = "/usr/bin/curl";
    o->scale = 1.0;
    o->rounds = DEFAULT_ROUNDS;
    static const struct option longs[] = {
        { "build", required_argument, NULL, 'b' }, { "json", required_argument, NULL, 'j' },
        { "curl", required_argument, NULL, 'c' }, { "scale", required_argument, NULL, 's' },
        { "rounds", required_argument, NULL, 'r' }, { "text", no_argument, NULL, 't' }, { "system-ca", no_argument, NULL, 'a' },
        { "keep", no_argument, NULL, 'k' },
        { "enforce-targets", no_argument, NULL, 'e' }, { "help", no_argument, NULL, 'h' }, { 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'b': bench_path(o->build, "%s", optarg); break;
        case 'j': bench_path(o->json, "%s", optarg); break;
        case 'c': o->curl = optarg; break;
        case 's':
            o->scale = strtod(optarg, NULL);
            if (!(o->scale > 0 && o->scale <= 20))
                usage(argv[0]);
            break;
        case 'r': {
            unsigned long n = strtoul(optarg, NULL, 10);
            if (n < 1 || n > BENCH_MAX_ROUNDS)
                usage(argv[0]);
            o->rounds = (unsigned)n;
            break;
        }
        case 't': o->text = true; break;
        case 'a': o->system_ca = true; break;
        case 'k': o->keep = true; break;
        case 'e': o->enforce = true; break;
        default: usage(argv[0]);
        }
    }
    if (optind != argc)
        usage(argv[0]);
    if (!o->json[0])
        bench_path(o->json, "%s/bench.json", o->build);
}

static int find_binaries(const options *o, binaries *b)
{
    bench_path(b->broker, "%s/broker/verifetchd", o->build);
    bench_path(b->worker, "%s/worker/verifetch-worker", o->build);
    bench_path(b->origin, "%s/tests/bench/verifetch-bench-origin", o->build);
    bench_path(b->launcher, "%s/tests/bench/verifetch-bench-worker-rss", o->build);
    const char *need[] = { b->broker, b->worker, b->origin, b->launcher, o->curl };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (access(need[i], X_OK) != 0) {
            fprintf(stderr, "bench: %s is not an executable (%s); build first: meson setup %s && ninja -C %s\n",
                    need[i], strerror(errno), o->build, o->build);
            return -1;
        }
    /* The broker needs absolute paths in its config. */
    char *abs[] = { b->broker, b->worker, b->origin, b->launcher };
    for (size_t i = 0; i < 4; i++) {
        char *r = realpath(abs[i], NULL);
        if (!r)
            return -1;
        bench_path(abs[i], "%s", r);
        free(r);
    }
    return 0;
}

static void make_target(bench_target *t, const bench_env *e, const options *o, const char *page, size_t bytes,
                        bool tls)
{
    memset(t, 0, sizeof *t);
    snprintf(t->url, sizeof t->url, "%s://127.0.0.1:%u/%s%s", tls ? "https" : "http",
             tls ? e->tls_port : e->plain_port, page, o->text ? ".txt" : "");
    t->ca_file = tls ? (o->system_ca ? e->ca_bundle : e->ca_pem) : NULL;
    t->body_bytes = bytes;
    t->min_text_chars = bytes / 2;   /* markup is a small part of the page */
    t->socket_path = e->socket_path;
    t->curl_path = o->curl;
}

/* A cell never has fewer fetches than threads, or it would not run at its concurrency. */
static unsigned scaled(unsigned n, double scale, unsigned at_least)
{
    unsigned v = (unsigned)(n * scale + 0.5);
    return v > at_least ? v : at_least;
}

static int run_mode(const bench_fetcher *f, const bench_env *e, const bench_target *t, bench_row *r,
                    unsigned round, int k)
{
    double t0 = bench_now_ms();
    bench_cpu before, after;
    bench_stats *st = &r->round[round][k];
    bench_cpu_snapshot(e, &before);
    int failed = bench_run_cell(f, t, &r->plan, st) != 0;
    bench_cpu_snapshot(e, &after);
    bench_cpu_per_fetch(&before, &after, r->plan.warmup + st->done + st->failed, &r->round_cpu[round][k]);
    fprintf(stderr, "bench: round %u %-4s %-5s c=%-2u %-9s %4u ok %3u failed  median %7.2f ms  %7.1f/s  (%.1f s)\n",
            round + 1, r->page, r->scheme, r->concurrency, f->name, st->done, st->failed, st->median_ms, st->per_s,
            (bench_now_ms() - t0) / 1e3);
    if (st->first_error[0])
        fprintf(stderr, "bench:   first error: %s\n", st->first_error);
    return failed;
}

/* Every cell in every round; within a cell the modes run back to back in an
 * order rotated by round and cell, so drift of the machine and whatever one
 * mode leaves behind (page cache, the zygote's pool, TIME_WAIT sockets) do
 * not always favour the same mode. */
static int run_grid(const options *o, const bench_env *e, bench_row *rows, size_t *n_rows)
{
    static const bench_fetcher *modes[BENCH_MODES] = { &bench_inproc, &bench_floor, &bench_curl_proc,
                                                       &bench_verifetch };
    static const char *schemes[] = { "http", "https" };
    static bench_target targets[16];
    int failures = 0;
    size_t n = 0;
    for (size_t p = 0; p < sizeof plan_table / sizeof plan_table[0]; p++)
        for (int s = 0; s < 2; s++) {
            bench_row *r = &rows[n];
            r->page = plan_table[p].page;
            r->scheme = schemes[s];
            r->concurrency = plan_table[p].conc;
            r->rounds = o->rounds;
            r->plan = (bench_plan){ .concurrency = plan_table[p].conc, .warmup = plan_table[p].warmup,
                                    .requests = scaled(plan_table[p].requests, o->scale, plan_table[p].conc),
                                    .time_cap_s = CELL_TIME_CAP_S * (o->scale > 1 ? o->scale : 1) };
            make_target(&targets[n], e, o, r->page, plan_table[p].bytes, s == 1);
            n++;
        }
    for (unsigned round = 0; round < o->rounds; round++)
        for (size_t i = 0; i < n; i++)
            for (int j = 0; j < BENCH_MODES; j++) {
                int k = (int)((j + round + i) % BENCH_MODES);
                failures += run_mode(modes[k], e, &targets[i], &rows[i], round, k);
            }
    for (size_t i = 0; i < n; i++)
        bench_row_summarise(&rows[i]);
    *n_rows = n;
    return failures;
}

/* Broker memory at 64 concurrent lookups, each page size its own phase. */
static int run_c64(const options *o, const bench_env *e, bench_memory_report *m)
{
    static const struct { const char *page; size_t bytes; unsigned requests; } phase[2] = {
        { "10k", 10240, 256 }, { "1m", 1048576, 128 },
    };
    int failures = 0;
    m->hwm_reset_ok = true;
    for (int p = 0; p < 2; p++) {
        if (bench_reset_hwm(e->broker_pid) != 0)
            m->hwm_reset_ok = false;
        bench_target t;
        make_target(&t, e, o, phase[p].page, phase[p].bytes, false);
        bench_plan plan = { .concurrency = 64, .warmup = 0, .requests = scaled(phase[p].requests, o->scale, 128),
                            .time_cap_s = CELL_TIME_CAP_S * 2 };
        if (bench_run_cell(&bench_verifetch, &t, &plan, &m->c64[p]) != 0)
            failures++;
        m->broker_hwm_c64_kib[p] = pi_status_kib(e->broker_pid, "VmHWM");
        fprintf(stderr, "bench: 64 concurrent %s lookups: %u ok, %u failed, broker VmHWM %ld KiB\n", phase[p].page,
                m->c64[p].done, m->c64[p].failed, m->broker_hwm_c64_kib[p]);
        if (m->c64[p].first_error[0])
            fprintf(stderr, "bench:   first error: %s\n", m->c64[p].first_error);
    }
    return failures;
}

/* Broker memory at 16 concurrent 8 MiB lookups, then what it keeps once
 * idle: the heap should go back near its start after the load. */
static int run_large_and_idle(const options *o, const bench_env *e, bench_memory_report *m)
{
    if (bench_reset_hwm(e->broker_pid) != 0)
        m->hwm_reset_ok = false;
    bench_target t;
    make_target(&t, e, o, "8m", PAGE_8M_BYTES, false);
    bench_plan plan = { .concurrency = 16, .warmup = 0, .requests = scaled(32, o->scale, 16),
                        .time_cap_s = CELL_TIME_CAP_S * 4 };
    int failures = bench_run_cell(&bench_verifetch, &t, &plan, &m->c16_8m) != 0;
    m->broker_hwm_c16_8m_kib = pi_status_kib(e->broker_pid, "VmHWM");
    fprintf(stderr, "bench: 16 concurrent 8m lookups: %u ok, %u failed, broker VmHWM %ld KiB\n", m->c16_8m.done,
            m->c16_8m.failed, m->broker_hwm_c16_8m_kib);
    if (m->c16_8m.first_error[0])
        fprintf(stderr, "bench:   first error: %s\n", m->c16_8m.first_error);
    /* Idle means every connection thread is gone again (a lookup the client
     * gave up on still runs to its deadline); then the quiet second the
     * broker waits before its heap trim, and a moment more. */
    double t0 = bench_now_ms();
    while (pi_status_kib(e->broker_pid, "Threads") > m->broker_start_threads && bench_now_ms() - t0 < 60000)
        bench_sleep_ms(100);
    m->broker_idle_wait_ms = bench_now_ms() - t0;
    bench_sleep_ms(1500);
    m->broker_idle_rss_kib = pi_status_kib(e->broker_pid, "VmRSS");
    fprintf(stderr, "bench: broker VmRSS once idle after the load: %ld KiB (start %ld; idle after %.1f s)\n",
            m->broker_idle_rss_kib, m->broker_start_rss_kib, m->broker_idle_wait_ms / 1e3);
    return failures;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* What the CA blob costs a worker: 10k https with our one-certificate CA
 * versus the distribution's bundle, the worker alone (launcher). */
static int run_ca_cost(const options *o, const binaries *b, const bench_env *e, bench_memory_report *m)
{
    const char *cas[2] = { e->ca_pem, e->ca_bundle };
    int failures = 0;
    m->ca_cost_reps = CA_COST_REPS;
    m->ca_bundle_bytes = -1;
    for (int k = 0; k < 2; k++) {
        m->ca_cost_cpu_us[k] = m->ca_cost_wall_ms[k] = m->ca_cost_maxrss_kib[k] = -1;
        if (!cas[k][0])
            continue;
        long wall[CA_COST_REPS], cpu[CA_COST_REPS];
        for (unsigned rep = 0; rep < CA_COST_REPS; rep++) {
            bench_worker_mem w;
            if (bench_worker_mem_run(b->launcher, b->worker, e, cas[k], true, o->text ? "/10k.txt" : "/10k",
                                     BENCH_MAX_BODY_BYTES, &w) != 0) {
                failures++;
                fprintf(stderr, "bench: CA cost run failed: %s\n", w.detail);
            }
            wall[rep] = w.wall_ms;
            cpu[rep] = w.cpu_us;
            if (w.maxrss_kib > m->ca_cost_maxrss_kib[k])
                m->ca_cost_maxrss_kib[k] = w.maxrss_kib;
        }
        qsort(wall, CA_COST_REPS, sizeof wall[0], cmp_long);
        qsort(cpu, CA_COST_REPS, sizeof cpu[0], cmp_long);
        m->ca_cost_wall_ms[k] = wall[CA_COST_REPS / 2];
        m->ca_cost_cpu_us[k] = cpu[CA_COST_REPS / 2];
    }
    struct stat st;
    if (e->ca_bundle[0] && stat(e->ca_bundle, &st) == 0)
        m->ca_bundle_bytes = (long)st.st_size;
    return failures;
}

static int run_worker_memory(const options *o, const binaries *b, const bench_env *e, bench_memory_report *m)
{
    static const char *pages[] = { "/10k", "/1m", "/8m" }, *pages_txt[] = { "/10k.txt", "/1m.txt", "/8m.txt" };
    int failures = 0;
    m->worker_reps = WORKER_REPS;
    for (int p = 0; p < 3; p++)
        for (int s = 0; s < 2; s++) {
            bench_worker_mem best = { .maxrss_kib = -1 };
            bool all_ok = true;
            for (unsigned rep = 0; rep < WORKER_REPS; rep++) {
                bench_worker_mem w;
                if (bench_worker_mem_run(b->launcher, b->worker, e, o->system_ca ? e->ca_bundle : e->ca_pem,
                                         s == 1, o->text ? pages_txt[p] : pages[p], BENCH_MAX_BODY_BYTES,
                                         &w) != 0) {
                    all_ok = false;
                    fprintf(stderr, "bench: worker memory run failed: %s\n", w.detail);
                }
                if (w.maxrss_kib > best.maxrss_kib)
                    best = w;
            }
            best.ok = best.ok && all_ok;
            failures += !all_ok;
            m->worker[p][s] = best;
        }
    failures += run_ca_cost(o, b, e, m);
    pid_t zygote = bench_find_zygote(e->broker_pid);
    m->zygote_rss_kib = zygote > 0 ? pi_status_kib(zygote, "VmRSS") : -1;
    m->zygote_hwm_kib = zygote > 0 ? pi_status_kib(zygote, "VmHWM") : -1;
    /* In situ: the broker's own workers, sampled from /proc during 1 MiB lookups. */
    m->insitu_lookups = INSITU_LOOKUPS;
    for (int s = 0; s < 2; s++) {
        bench_target t;
        make_target(&t, e, o, "1m", 1048576, s == 1);
        bench_plan plan = { .concurrency = 1, .warmup = 0, .requests = INSITU_LOOKUPS, .time_cap_s = CELL_TIME_CAP_S };
        bench_stats st;
        bench_sampler *smp = bench_sampler_start(e->broker_pid);
        failures += bench_run_cell(&bench_verifetch, &t, &plan, &st) != 0;
        bench_sampler_stop(smp, &m->insitu_hwm_kib[s], &m->insitu_workers[s]);
    }
    return failures;
}

int main(int argc, char **argv)
{
    options o = { 0 };
    parse_options(argc, argv, &o);
    binaries bin;
    if (find_binaries(&o, &bin) != 0)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    /* The floor runs the broker's judge and JSON writer: it reuses a page's
     * buffers the way the broker does, or it pays a page fault on every copy
     * that verifetchd does not. Not the broker's one arena: the floor's 16
     * threads contend on it (1 MiB http c=16: 17.1 -> 23.7 ms CPU per fetch). */
    vf_memory_reuse_page_buffers();
    curl_global_init(CURL_GLOBAL_ALL);
    if (bench_floor_setup() != 0)
        return 1;
    bench_kernel_cost kernel;
    bench_kernel_cost_measure(&kernel);
    double busy_share_before = bench_busy_share(BENCH_QUIET_SAMPLE_MS);
    double t_start = bench_now_ms();
    double load_before = bench_loadavg();
    double busy_before = bench_machine_busy_ms();
    double kthreads_before = bench_kthreads_ms();

    bench_env env = { 0 };
    snprintf(env.tmpdir, sizeof env.tmpdir, "/tmp/verifetch-bench.XXXXXX");
    if (!mkdtemp(env.tmpdir)) {
        perror("bench: mkdtemp");
        return 1;
    }
    if (bench_env_make_certs(&env) != 0 || (o.system_ca && !env.ca_bundle[0])) {
        fprintf(stderr, "bench: cannot make the certificates%s\n", o.system_ca ? " or the system CA bundle" : "");
        bench_env_teardown(&env, true);
        return 1;
    }
    if (bench_env_start_origin(&env, bin.origin) != 0 ||
        bench_env_start_broker(&env, bin.broker, bin.worker, o.system_ca ? env.ca_bundle : env.ca_pem) != 0) {
        bench_env_teardown(&env, true);
        fprintf(stderr, "bench: setup failed; files kept in %s\n", env.tmpdir);
        return 1;
    }
    fprintf(stderr, "bench: origin plain :%u tls :%u, broker pid %d, files in %s\n", env.plain_port, env.tls_port,
            (int)env.broker_pid, env.tmpdir);

    static bench_row rows[16];
    static bench_memory_report mem;
    size_t n_rows = 0;
    mem.broker_start_rss_kib = pi_status_kib(env.broker_pid, "VmRSS");
    mem.broker_start_threads = pi_status_kib(env.broker_pid, "Threads");
    int failures = run_grid(&o, &env, rows, &n_rows);
    mem.broker_hwm_grid_kib = pi_status_kib(env.broker_pid, "VmHWM");
    failures += run_c64(&o, &env, &mem);
    failures += run_large_and_idle(&o, &env, &mem);
    failures += run_worker_memory(&o, &bin, &env, &mem);

    /* What else the machine did meanwhile: its busy time minus ours. */
    bench_cpu ours;
    bench_cpu_snapshot(&env, &ours);
    double foreign_ms = bench_machine_busy_ms() - busy_before - bench_cpu_total(&ours) + kthreads_before;

    bool keep = o.keep || failures > 0;
    bench_env_teardown(&env, keep);
    if (keep)
        fprintf(stderr, "bench: files kept in %s\n", env.tmpdir);

    bench_run_info info = { .body_type = o.text ? "text/plain" : "text/html", .scale = o.scale,
                            .ca_kind = o.system_ca ? "system CA bundle + throwaway CA" : "throwaway CA only",
                            .total_s = (bench_now_ms() - t_start) / 1e3,
                            .nproc = (unsigned)sysconf(_SC_NPROCESSORS_ONLN),
                            .load_before = load_before, .load_after = bench_loadavg(),
                            .busy_share_before = busy_share_before,
                            .foreign_cpu_s = foreign_ms / 1e3, .rounds = o.rounds, .kernel = kernel };
    info.machine_cpu_s = info.total_s * info.nproc;
    bench_print_report(stdout, &info, rows, n_rows, &mem);
    int json_rc = bench_write_json(o.json, &info, rows, n_rows, &mem);
    if (json_rc == 0)
        printf("\nJSON: %s\n", o.json);
    bench_floor_teardown();
    curl_global_cleanup();
    if (failures > 0 || json_rc != 0) {
        fprintf(stderr, "bench: %d measurement(s) had failures (see notes above)\n", failures);
        return 1;
    }
    if (o.enforce && !bench_targets_met(rows, n_rows, &mem)) {
        fprintf(stderr, "bench: targets not met (--enforce-targets)\n");
        return 3;
    }
    return 0;
}
