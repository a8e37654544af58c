/* The benchmark's output: a table for people and a JSON file for README
 * figures, both from the same numbers, with the issue-6 targets judged. */
#include "bench.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <curl/curl.h>
#include <jansson.h>

#define MIB_KIB 1024.0

typedef struct {
    char name[96];
    double value, limit;
    bool at_most;                /* value must be <= limit (else >=) */
    const char *unit;
    bool measured;
} bench_target_check;

static const bench_row *find_row(const bench_row *rows, size_t n, const char *page, const char *scheme,
                                 unsigned conc)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].page, page) && !strcmp(rows[i].scheme, scheme) && rows[i].concurrency == conc)
            return &rows[i];
    return NULL;
}

static bool usable(const bench_stats *s)
{
    return s->done > 0 && s->failed == 0;
}

static double ratio(double num, double den)
{
    return den > 0 ? num / den : 0;
}

static bench_target_check *add(bench_target_check *t, size_t *k, double limit, bool at_most, const char *unit,
                               const char *name)
{
    bench_target_check *c = &t[(*k)++];
    *c = (bench_target_check){ .limit = limit, .at_most = at_most, .unit = unit };
    snprintf(c->name, sizeof c->name, "%s", name);
    return c;
}

/* Issue 15's targets; the ratios are against the floor measured in the same run. */
static size_t judge(const bench_row *rows, size_t n, const bench_memory_report *m, bench_target_check *t)
{
    size_t k = 0;
    const bench_row *h16 = find_row(rows, n, "10k", "http", 16), *h1 = find_row(rows, n, "10k", "http", 1);
    const bench_row *s16 = find_row(rows, n, "10k", "https", 16), *m16 = find_row(rows, n, "1m", "http", 16);
    bench_target_check *c = add(t, &k, 1.0, true, "ms", "10k http c=16: CPU per lookup, broker+zygote+workers");
    if ((c->measured = h16 && usable(&h16->mode[BENCH_VERIFETCH]))) {
        const bench_cpu *v = &h16->cpu[BENCH_VERIFETCH];
        c->value = v->broker_ms + v->workers_ms + v->zygote_ms;
    }
    c = add(t, &k, 0.25, false, "x", "10k http c=16: throughput verifetch/floor");
    if ((c->measured = h16 && usable(&h16->mode[BENCH_VERIFETCH]) && usable(&h16->mode[BENCH_FLOOR])))
        c->value = ratio(h16->mode[BENCH_VERIFETCH].per_s, h16->mode[BENCH_FLOOR].per_s);
    c = add(t, &k, 0.8, true, "ms", "10k http c=1: added median latency over the floor");
    if ((c->measured = h1 && usable(&h1->mode[BENCH_VERIFETCH]) && usable(&h1->mode[BENCH_FLOOR])))
        c->value = h1->mode[BENCH_VERIFETCH].median_ms - h1->mode[BENCH_FLOOR].median_ms;
    c = add(t, &k, 0.7, false, "x", "10k https c=16: throughput verifetch/floor");
    if ((c->measured = s16 && usable(&s16->mode[BENCH_VERIFETCH]) && usable(&s16->mode[BENCH_FLOOR])))
        c->value = ratio(s16->mode[BENCH_VERIFETCH].per_s, s16->mode[BENCH_FLOOR].per_s);
    c = add(t, &k, 0.9, false, "x", "1m http c=16: throughput verifetch/floor");
    if ((c->measured = m16 && usable(&m16->mode[BENCH_VERIFETCH]) && usable(&m16->mode[BENCH_FLOOR])))
        c->value = ratio(m16->mode[BENCH_VERIFETCH].per_s, m16->mode[BENCH_FLOOR].per_s);
    /* The issue measured the worker's anonymous memory (41 MiB for 8 MiB); the
     * ~11 MiB of libraries a worker shares with the zygote do not grow with the
     * page, so the target is the peak's growth from a 10 KiB page to an 8 MiB one. */
    c = add(t, &k, 2.5, true, "x", "worker peak RSS growth / page, 8m vs 10k http (launcher)");
    if ((c->measured = m->worker[2][0].ok && m->worker[0][0].ok))
        c->value = (m->worker[2][0].maxrss_kib - m->worker[0][0].maxrss_kib) / (8.0 * MIB_KIB);
    c = add(t, &k, 100, true, "MiB", "broker peak RSS at 16 concurrent 8m lookups");
    /* Shown even when some lookups failed (the peak is then a lower bound). */
    c->value = m->broker_hwm_c16_8m_kib / MIB_KIB;
    c->measured = m->broker_hwm_c16_8m_kib > 0 && usable(&m->c16_8m);
    c = add(t, &k, 32, true, "MiB", "broker RSS once idle after the load");
    if ((c->measured = m->broker_idle_rss_kib > 0))
        c->value = m->broker_idle_rss_kib / MIB_KIB;
    return k;
}

static bool met(const bench_target_check *t)
{
    return t->measured && (t->at_most ? t->value <= t->limit : t->value >= t->limit);
}

bool bench_run_quiet(const bench_run_info *info)
{
    /* Other processes' CPU during the run, and how busy the machine was just
     * before it began (a busy machine at the start skews the first round). */
    return info->machine_cpu_s > 0 && info->foreign_cpu_s <= BENCH_QUIET_SHARE * info->machine_cpu_s &&
           info->busy_share_before >= 0 && info->busy_share_before <= BENCH_QUIET_BEFORE;
}

bool bench_targets_met(const bench_row *rows, size_t n_rows, const bench_memory_report *m)
{
    bench_target_check t[16];
    size_t nt = judge(rows, n_rows, m, t);
    for (size_t i = 0; i < nt; i++)
        if (!met(&t[i]))
            return false;
    return true;
}

static const char *mode_label[BENCH_MODES] = { "(a) libcurl", "(b) floor", "(c) curl/fetch", "(d) verifetch" };

void bench_print_report(FILE *out, const bench_run_info *info, const bench_row *rows, size_t n_rows,
                        const bench_memory_report *m)
{
    fprintf(out, "\nverifetch benchmark: %u CPUs, %s\nloopback origin serving %s, keep-alive off, TLS 1.3 P-256 "
                 "with %s, scale %.2f, %u interleaved rounds, %.0f s\n",
            info->nproc, curl_version(), info->body_type, info->ca_kind, info->scale, info->rounds, info->total_s);
    fprintf(out, "other processes used %.1f of %.1f CPU-seconds during the run; the machine was %.0f%% busy in the "
                 "%.0f s before it (load average %.2f before, %.2f after)\n",
            info->foreign_cpu_s, info->machine_cpu_s, 100 * info->busy_share_before, BENCH_QUIET_SAMPLE_MS / 1e3,
            info->load_before, info->load_after);
    fprintf(out, "this kernel: system call %.2f us, first touch of an anonymous page %.2f us, fork + exit + wait "
                 "%.3f ms, a child's first read of a page its parent filled %.2f us (what a worker's life is made "
                 "of: compare machines by these before comparing figures)\n",
            info->kernel.syscall_us, info->kernel.page_fault_us, info->kernel.fork_exit_wait_ms,
            info->kernel.inherited_read_us);
    if (!bench_run_quiet(info))
        fprintf(out, "NOISY RUN: other processes took over %.0f%% of the machine, or it was over %.0f%% busy just "
                     "before the start; compare ratios only, and rerun on a quiet machine\n",
                100 * BENCH_QUIET_SHARE, 100 * BENCH_QUIET_BEFORE);
    fprintf(out, "(b) the floor = in-process fetch + the worker's extraction + the broker's judging, redaction, "
                 "receipt and JSON, no sandbox\n"
                 "per mode: median latency ms [min-max of the round medians], fetches/s [min-max]; "
                 "medians over rounds\n\n");
    fprintf(out, "%-4s %-5s %4s %5s |", "page", "proto", "conc", "n/rd");
    for (int k = 0; k < BENCH_MODES; k++)
        fprintf(out, " %-30s |", mode_label[k]);
    fprintf(out, " %6s %7s %6s\n", "d/b", "d-b", "d/b");
    fprintf(out, "%-4s %-5s %4s %5s |", "", "", "", "");
    for (int k = 0; k < BENCH_MODES; k++)
        fprintf(out, " %-30s |", "p50 ms [range]   /s [range]");
    fprintf(out, " %6s %7s %6s\n", "thr", "p50 ms", "cpu");
    for (size_t i = 0; i < n_rows; i++) {
        const bench_row *r = &rows[i];
        fprintf(out, "%-4s %-5s %4u %5u |", r->page, r->scheme, r->concurrency, r->plan.requests);
        for (int k = 0; k < BENCH_MODES; k++) {
            const bench_stats *st = &r->mode[k];
            char cellbuf[64];
            if (st->done == 0)
                snprintf(cellbuf, sizeof cellbuf, "-");
            else
                snprintf(cellbuf, sizeof cellbuf, "%5.2f[%.2f-%.2f] %5.0f[%.0f-%.0f]", st->median_ms,
                         r->median_range[k].min, r->median_range[k].max, st->per_s, r->per_s_range[k].min,
                         r->per_s_range[k].max);
            fprintf(out, " %-30s |", cellbuf);
        }
        const bench_stats *b = &r->mode[BENCH_FLOOR], *d = &r->mode[BENCH_VERIFETCH];
        fprintf(out, " %6.2f %7.2f %6.2f\n", ratio(d->per_s, b->per_s), d->median_ms - b->median_ms,
                ratio(r->cpu_total[BENCH_VERIFETCH], r->cpu_total[BENCH_FLOOR]));
    }
    fprintf(out, "  d/b thr: verifetch throughput / the floor's (the headline); d-b p50: added median latency; "
                 "d/b cpu: CPU per lookup / the floor's CPU per fetch\n");
    for (size_t i = 0; i < n_rows; i++)
        for (int k = 0; k < BENCH_MODES; k++) {
            const bench_stats *st = &rows[i].mode[k];
            if (st->failed || st->done < st->requested)
                fprintf(out, "  note: %s %s c=%u %s: %u/%u done over all rounds, %u failed%s%s\n", rows[i].page,
                        rows[i].scheme, rows[i].concurrency, mode_label[k], st->done, st->requested, st->failed,
                        st->first_error[0] ? ": " : "", st->first_error);
        }

    fprintf(out, "\nCPU ms per fetch, user+system, by process (warm-up included; median over rounds; "
                 "tot [min-max])\n");
    fprintf(out, "%-4s %-5s %4s | %6s %6s | %6s %6s | %6s %6s | %6s %6s %6s %6s %6s | %-19s %-19s %-19s %-19s\n",
            "page", "proto", "conc", "a:cli", "a:orig", "b:cli", "b:orig", "c:curl", "c:orig", "d:cli", "d:brkr",
            "d:wrkr", "d:orig", "d:kthr", "a tot", "b tot", "c tot", "d tot");
    for (size_t i = 0; i < n_rows; i++) {
        const bench_row *r = &rows[i];
        const bench_cpu *a = &r->cpu[BENCH_INPROC], *b = &r->cpu[BENCH_FLOOR], *c = &r->cpu[BENCH_CURL],
                        *d = &r->cpu[BENCH_VERIFETCH];
        fprintf(out, "%-4s %-5s %4u | %6.2f %6.2f | %6.2f %6.2f | %6.2f %6.2f | %6.2f %6.2f %6.2f %6.2f %6.2f |",
                r->page, r->scheme, r->concurrency, a->client_ms, a->origin_ms, b->client_ms, b->origin_ms,
                c->curl_ms + c->client_ms, c->origin_ms, d->client_ms, d->broker_ms, d->workers_ms + d->zygote_ms,
                d->origin_ms, d->kthreads_ms);
        for (int k = 0; k < BENCH_MODES; k++) {
            char tot[32];
            snprintf(tot, sizeof tot, "%.2f[%.2f-%.2f]", r->cpu_total[k], r->cpu_total_range[k].min,
                     r->cpu_total_range[k].max);
            fprintf(out, " %-19s", tot);
        }
        fprintf(out, "\n");
    }
    fprintf(out, "  d:wrkr includes the zygote; kthr: kernel threads (machine-wide, e.g. network-namespace teardown); "
                 "totals include them.\n  CPU per fetch is the figure least disturbed by other load.\n");

    fprintf(out, "\nmemory (KiB)\n");
    fprintf(out, "  broker VmRSS after start           %8ld\n", m->broker_start_rss_kib);
    fprintf(out, "  broker VmHWM after the grid        %8ld\n", m->broker_hwm_grid_kib);
    static const char *pages[] = { "10k", "1m", "8m" }, *schemes[] = { "http", "https" };
    for (int p = 0; p < 2; p++)
        fprintf(out, "  broker VmHWM, 64 concurrent %-3s    %8ld  (%u lookups, %u failed, median %.1f ms%s)\n",
                pages[p], m->broker_hwm_c64_kib[p], m->c64[p].done, m->c64[p].failed, m->c64[p].median_ms,
                m->hwm_reset_ok ? "" : "; HWM not reset between phases");
    fprintf(out, "  broker VmHWM, 16 concurrent 8m     %8ld  (%u lookups, %u failed, median %.1f ms)\n",
            m->broker_hwm_c16_8m_kib, m->c16_8m.done, m->c16_8m.failed, m->c16_8m.median_ms);
    fprintf(out, "  broker VmRSS once idle after load  %8ld  (threads back to %ld after %.1f s)\n",
            m->broker_idle_rss_kib, m->broker_start_threads, m->broker_idle_wait_ms / 1e3);
    fprintf(out, "  worker peak RSS, standalone launcher, wait4 ru_maxrss, max of %u runs:\n", m->worker_reps);
    for (int p = 0; p < 3; p++)
        for (int s = 0; s < 2; s++) {
            const bench_worker_mem *w = &m->worker[p][s];
            fprintf(out, "    %-3s %-5s  maxrss %6ld  (while sending: VmHWM %ld = anon %ld + libs/file %ld; launcher %ld; "
                         "CPU %.1f ms)%s\n",
                    pages[p], schemes[s], w->maxrss_kib, w->hwm_sample_kib, w->anon_kib, w->file_kib, w->launcher_kib,
                    w->cpu_us / 1e3, w->ok ? "" : "  FAILED");
        }
    if (m->worker[2][0].ok && m->worker[0][0].ok)
        fprintf(out, "    page-dependent part, 8m http: (maxrss 8m - maxrss 10k) / page = %.2f\n",
                (m->worker[2][0].maxrss_kib - m->worker[0][0].maxrss_kib) / (8.0 * MIB_KIB));
    fprintf(out, "  worker alone, 10k https, medians of %u, CPU ms / wall ms / max RSS KiB:\n", m->ca_cost_reps);
    fprintf(out, "    throwaway CA only              %6.2f / %4ld / %6ld\n", m->ca_cost_cpu_us[0] / 1e3,
            m->ca_cost_wall_ms[0], m->ca_cost_maxrss_kib[0]);
    fprintf(out, "    system CA bundle (%6ld bytes) %6.2f / %4ld / %6ld\n", m->ca_bundle_bytes,
            m->ca_cost_cpu_us[1] / 1e3, m->ca_cost_wall_ms[1], m->ca_cost_maxrss_kib[1]);
    if (m->zygote_rss_kib >= 0)
        fprintf(out, "  zygote (one per broker) VmRSS %ld, VmHWM %ld\n", m->zygote_rss_kib, m->zygote_hwm_kib);
    else
        fprintf(out, "  zygote: none (the broker exec'd every worker)\n");
    for (int s = 0; s < 2; s++)
        fprintf(out, "  worker VmHWM in situ (sampled /proc, lower bound), 1m %-5s %6ld  (%u workers seen, %u lookups)\n",
                schemes[s], m->insitu_hwm_kib[s], m->insitu_workers[s], m->insitu_lookups);

    bench_target_check t[16];
    size_t nt = judge(rows, n_rows, m, t);
    fprintf(out, "\ntargets (issue 15)%s\n", bench_run_quiet(info) ? "" : "  [NOISY RUN]");
    for (size_t i = 0; i < nt; i++)
        fprintf(out, "  %-62s %8.2f %-3s %s %6.2f  %s\n", t[i].name, t[i].value, t[i].unit,
                t[i].at_most ? "<=" : ">=", t[i].limit, !t[i].measured ? "NOT MEASURED" : met(&t[i]) ? "met" : "NOT MET");
}

static json_t *stats_json(const bench_stats *s)
{
    return json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:s}", "requested", (json_int_t)s->requested,
                     "done", (json_int_t)s->done, "failed", (json_int_t)s->failed, "wall_s", s->wall_s,
                     "median_ms", s->median_ms, "p99_ms", s->p99_ms, "mean_ms", s->mean_ms, "min_ms", s->min_ms,
                     "max_ms", s->max_ms, "per_s", s->per_s, "first_error", s->first_error);
}

static json_t *cpu_json(const bench_cpu *c)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "client_ms", c->client_ms, "curl_processes_ms", c->curl_ms,
                     "broker_ms", c->broker_ms, "workers_ms", c->workers_ms, "zygote_ms", c->zygote_ms,
                     "origin_ms", c->origin_ms, "kernel_threads_ms", c->kthreads_ms);
}

static json_t *worker_json(const bench_worker_mem *w)
{
    return json_pack("{s:b, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:I}", "ok", w->ok,
                     "maxrss_kib", (json_int_t)w->maxrss_kib, "rss_anon_kib", (json_int_t)w->anon_kib,
                     "rss_file_kib", (json_int_t)w->file_kib,
                     "wall_ms", (json_int_t)w->wall_ms, "cpu_ms", w->cpu_us / 1e3,
                     "hwm_sample_kib", (json_int_t)w->hwm_sample_kib, "launcher_kib", (json_int_t)w->launcher_kib,
                     "text_len", (json_int_t)w->text_len, "http_status", (json_int_t)w->http_status);
}

int bench_write_json(const char *path, const bench_run_info *info, const bench_row *rows, size_t n_rows,
                     const bench_memory_report *m)
{
    struct utsname u;
    uname(&u);
    static const char *mode_names[] = { "inproc", "floor", "curl_process", "verifetch" };
    json_t *cells = json_array();
    for (size_t i = 0; i < n_rows; i++) {
        const bench_row *r = &rows[i];
        json_t *modes = json_object();
        for (int k = 0; k < BENCH_MODES; k++) {
            json_t *st = stats_json(&r->mode[k]);
            json_t *per_round = json_array();
            for (unsigned q = 0; q < r->rounds; q++) {
                json_t *one = stats_json(&r->round[q][k]);
                json_object_set_new(one, "cpu_per_fetch", cpu_json(&r->round_cpu[q][k]));
                json_array_append_new(per_round, one);
            }
            json_object_set_new(st, "cpu_per_fetch", cpu_json(&r->cpu[k]));
            json_object_set_new(st, "cpu_total_ms", json_pack("{s:f, s:f, s:f}", "median", r->cpu_total[k], "min",
                                                              r->cpu_total_range[k].min, "max",
                                                              r->cpu_total_range[k].max));
            json_object_set_new(st, "median_ms_range", json_pack("[f, f]", r->median_range[k].min,
                                                                 r->median_range[k].max));
            json_object_set_new(st, "per_s_range", json_pack("[f, f]", r->per_s_range[k].min, r->per_s_range[k].max));
            json_object_set_new(st, "rounds", per_round);
            json_object_set_new(modes, mode_names[k], st);
        }
        const bench_stats *b = &r->mode[BENCH_FLOOR], *c = &r->mode[BENCH_CURL], *d = &r->mode[BENCH_VERIFETCH];
        json_array_append_new(cells, json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:f, s:f, s:f, s:f}",
            "page", r->page, "scheme", r->scheme, "concurrency", (json_int_t)r->concurrency,
            "warmup", (json_int_t)r->plan.warmup, "requests_per_round", (json_int_t)r->plan.requests, "modes", modes,
            "verifetch_over_floor_throughput", ratio(d->per_s, b->per_s),
            "verifetch_minus_floor_median_ms", d->median_ms - b->median_ms,
            "verifetch_over_floor_cpu", ratio(r->cpu_total[BENCH_VERIFETCH], r->cpu_total[BENCH_FLOOR]),
            "verifetch_over_curl_process_throughput", ratio(d->per_s, c->per_s)));
    }
    static const char *pages[] = { "10k", "1m", "8m" }, *schemes[] = { "http", "https" };
    json_t *workers = json_object();
    for (int p = 0; p < 3; p++)
        for (int s = 0; s < 2; s++) {
            char key[32];
            snprintf(key, sizeof key, "%s_%s", pages[p], schemes[s]);
            json_object_set_new(workers, key, worker_json(&m->worker[p][s]));
        }
    json_t *ca_cost = json_pack("{s:I, s:I, s:{s:f, s:I, s:I}, s:{s:f, s:I, s:I}}", "reps",
        (json_int_t)m->ca_cost_reps, "system_bundle_bytes", (json_int_t)m->ca_bundle_bytes,
        "throwaway_ca", "median_cpu_ms", m->ca_cost_cpu_us[0] / 1e3, "median_wall_ms", (json_int_t)m->ca_cost_wall_ms[0],
        "max_rss_kib", (json_int_t)m->ca_cost_maxrss_kib[0],
        "system_bundle", "median_cpu_ms", m->ca_cost_cpu_us[1] / 1e3, "median_wall_ms", (json_int_t)m->ca_cost_wall_ms[1],
        "max_rss_kib", (json_int_t)m->ca_cost_maxrss_kib[1]);
    json_t *memory = json_pack("{s:I, s:I, s:b, s:{s:I, s:I}, s:{s:o, s:o}, s:I, s:o, s:I, s:I, s:o, s:o, "
                               "s:{s:I, s:I}, s:{s:I, s:I, s:I, s:I, s:I}}",
        "broker_start_rss_kib", (json_int_t)m->broker_start_rss_kib,
        "broker_hwm_after_grid_kib", (json_int_t)m->broker_hwm_grid_kib,
        "hwm_reset_between_phases", m->hwm_reset_ok,
        "broker_hwm_c64_kib", "10k_http", (json_int_t)m->broker_hwm_c64_kib[0],
        "1m_http", (json_int_t)m->broker_hwm_c64_kib[1],
        "c64_lookups", "10k_http", stats_json(&m->c64[0]), "1m_http", stats_json(&m->c64[1]),
        "broker_hwm_c16_8m_kib", (json_int_t)m->broker_hwm_c16_8m_kib, "c16_8m_lookups", stats_json(&m->c16_8m),
        "broker_idle_rss_after_load_kib", (json_int_t)m->broker_idle_rss_kib,
        "worker_standalone_reps", (json_int_t)m->worker_reps, "worker_standalone", workers,
        "worker_ca_cost_10k_https", ca_cost,
        "zygote", "rss_kib", (json_int_t)m->zygote_rss_kib, "hwm_kib", (json_int_t)m->zygote_hwm_kib,
        "worker_insitu_sampled", "1m_http_hwm_kib", (json_int_t)m->insitu_hwm_kib[0],
        "1m_https_hwm_kib", (json_int_t)m->insitu_hwm_kib[1], "workers_seen_http", (json_int_t)m->insitu_workers[0],
        "workers_seen_https", (json_int_t)m->insitu_workers[1], "lookups_each", (json_int_t)m->insitu_lookups);
    bench_target_check t[16];
    size_t nt = judge(rows, n_rows, m, t);
    json_t *targets = json_array();
    for (size_t i = 0; i < nt; i++)
        json_array_append_new(targets, json_pack("{s:s, s:f, s:s, s:f, s:s, s:b, s:b}", "name", t[i].name,
            "value", t[i].value, "comparison", t[i].at_most ? "<=" : ">=", "limit", t[i].limit, "unit", t[i].unit,
            "measured", t[i].measured, "met", met(&t[i])));
    json_t *doc = json_pack("{s:s, s:{s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, "
                            "s:{s:f, s:f, s:f, s:f}}, s:o, s:o, s:o}",
        "schema", "verifetch.bench/v2",
        "run", "rounds", (json_int_t)info->rounds, "nproc", (json_int_t)info->nproc, "kernel", u.release, "machine", u.machine,
        "curl", curl_version(), "body_type", info->body_type, "ca", info->ca_kind, "scale", info->scale,
        "total_s", info->total_s,
        "loadavg_before", info->load_before, "loadavg_after", info->load_after,
        "busy_share_before", info->busy_share_before,
        "foreign_cpu_s", info->foreign_cpu_s, "machine_cpu_s", info->machine_cpu_s, "quiet", bench_run_quiet(info),
        "kernel_cost", "syscall_us", info->kernel.syscall_us, "page_fault_us", info->kernel.page_fault_us,
        "fork_exit_wait_ms", info->kernel.fork_exit_wait_ms, "inherited_read_us", info->kernel.inherited_read_us,
        "cells", cells, "memory", memory, "targets", targets);
    if (!doc) {
        fprintf(stderr, "bench: cannot build the JSON report\n");
        return -1;
    }
    int rc = json_dump_file(doc, path, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    json_decref(doc);
    if (rc != 0)
        fprintf(stderr, "bench: cannot write %s\n", path);
    return rc == 0 ? 0 : -1;
}
