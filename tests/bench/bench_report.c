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

/* Issue 6, item 2, one check per page/scheme where it applies. */
static size_t judge(const bench_row *rows, size_t n, const bench_memory_report *m, bench_target_check *t)
{
    size_t k = 0;
    static const char *pages[] = { "10k", "1m" }, *schemes[] = { "http", "https" };
    for (int p = 0; p < 2; p++)
        for (int s = 0; s < 2; s++) {
            const bench_row *r = find_row(rows, n, pages[p], schemes[s], 16);
            t[k] = (bench_target_check){ .limit = 1.5, .unit = "x", .at_most = false };
            snprintf(t[k].name, sizeof t[k].name, "throughput c=16 verifetch/curl-per-fetch, %s %s",
                     pages[p], schemes[s]);
            t[k].measured = r && usable(&r->mode[BENCH_VERIFETCH]) && usable(&r->mode[BENCH_CURL]);
            if (t[k].measured)
                t[k].value = ratio(r->mode[BENCH_VERIFETCH].per_s, r->mode[BENCH_CURL].per_s);
            k++;
        }
    for (int s = 0; s < 2; s++) {
        const bench_row *r = find_row(rows, n, "10k", schemes[s], 1);
        t[k] = (bench_target_check){ .limit = 1.0, .unit = "ms", .at_most = true };
        snprintf(t[k].name, sizeof t[k].name, "added median latency over in-process, 10k %s c=1", schemes[s]);
        t[k].measured = r && usable(&r->mode[BENCH_VERIFETCH]) && usable(&r->mode[BENCH_INPROC]);
        if (t[k].measured)
            t[k].value = r->mode[BENCH_VERIFETCH].median_ms - r->mode[BENCH_INPROC].median_ms;
        k++;
    }
    for (int p = 0; p < 2; p++) {
        t[k] = (bench_target_check){ .limit = 32, .unit = "MiB", .at_most = true };
        snprintf(t[k].name, sizeof t[k].name, "broker peak RSS at 64 concurrent lookups, %s http", pages[p]);
        t[k].measured = m->broker_hwm_c64_kib[p] > 0 && usable(&m->c64[p]);
        t[k].value = m->broker_hwm_c64_kib[p] / MIB_KIB;
        k++;
    }
    for (int s = 0; s < 2; s++) {
        t[k] = (bench_target_check){ .limit = 12, .unit = "MiB", .at_most = true };
        snprintf(t[k].name, sizeof t[k].name, "worker peak RSS, 1m %s", schemes[s]);
        t[k].measured = m->worker[1][s].ok;
        t[k].value = m->worker[1][s].maxrss_kib / MIB_KIB;
        k++;
    }
    return k;
}

static bool met(const bench_target_check *t)
{
    return t->measured && (t->at_most ? t->value <= t->limit : t->value >= t->limit);
}

bool bench_run_quiet(const bench_run_info *info)
{
    return info->machine_cpu_s > 0 && info->foreign_cpu_s <= BENCH_QUIET_SHARE * info->machine_cpu_s;
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

static void print_stats(FILE *out, const bench_stats *s)
{
    if (s->done == 0) {
        fprintf(out, " %7s %7s %7s", "-", "-", "-");
        return;
    }
    fprintf(out, " %7.2f %7.2f %7.0f", s->median_ms, s->p99_ms, s->per_s);
}

void bench_print_report(FILE *out, const bench_run_info *info, const bench_row *rows, size_t n_rows,
                        const bench_memory_report *m)
{
    fprintf(out, "\nverifetch benchmark: %u CPUs, %s\nloopback origin serving %s, keep-alive off, TLS 1.3 P-256 "
                 "with %s, scale %.2f, %.0f s\n",
            info->nproc, curl_version(), info->body_type, info->ca_kind, info->scale, info->total_s);
    fprintf(out, "other processes used %.1f of %.1f CPU-seconds during the run (load average %.2f before, %.2f after); "
                 "anything but ~0 skews the figures\n",
            info->foreign_cpu_s, info->machine_cpu_s, info->load_before, info->load_after);
    if (!bench_run_quiet(info))
        fprintf(out, "WARNING: other processes took over %.0f%% of the machine; these figures are not comparable, "
                     "rerun on a quiet machine\n", 100 * BENCH_QUIET_SHARE);
    fprintf(out, "latency in ms (median, p99), throughput in fetches/s\n\n");
    fprintf(out, "%-4s %-5s %4s %5s | %-23s | %-23s | %-23s | %6s %6s %7s\n", "page", "proto", "conc", "n",
            "(a) libcurl in-process", "(b) curl process/fetch", "(c) verifetch lookup", "c/a", "c/b", "c-a");
    fprintf(out, "%-4s %-5s %4s %5s | %7s %7s %7s | %7s %7s %7s | %7s %7s %7s | %6s %6s %7s\n", "", "", "", "",
            "med", "p99", "/s", "med", "p99", "/s", "med", "p99", "/s", "lat", "thr", "med ms");
    for (size_t i = 0; i < n_rows; i++) {
        const bench_row *r = &rows[i];
        fprintf(out, "%-4s %-5s %4u %5u |", r->page, r->scheme, r->concurrency, r->plan.requests);
        for (int k = 0; k < BENCH_MODES; k++) {
            print_stats(out, &r->mode[k]);
            fprintf(out, " |");
        }
        const bench_stats *a = &r->mode[BENCH_INPROC], *b = &r->mode[BENCH_CURL], *c = &r->mode[BENCH_VERIFETCH];
        fprintf(out, " %6.2f %6.2f %7.2f\n", ratio(c->median_ms, a->median_ms), ratio(c->per_s, b->per_s),
                c->median_ms - a->median_ms);
    }
    for (size_t i = 0; i < n_rows; i++)
        for (int k = 0; k < BENCH_MODES; k++) {
            const bench_stats *s = &rows[i].mode[k];
            if (s->failed || s->done < s->requested)
                fprintf(out, "  note: %s %s c=%u mode %d: %u/%u done, %u failed%s%s\n", rows[i].page,
                        rows[i].scheme, rows[i].concurrency, k, s->done, s->requested, s->failed,
                        s->first_error[0] ? ": " : "", s->first_error);
        }

    fprintf(out, "\nCPU ms per fetch, user+system, by process (warm-up included; c:wrkr includes a zygote)\n");
    fprintf(out, "%-4s %-5s %4s | %6s %6s | %6s %6s %6s | %6s %6s %6s %6s %6s | %6s %6s %6s | %6s\n", "page",
            "proto", "conc", "a:cli", "a:orig", "b:curl", "b:cli", "b:orig", "c:cli", "c:brkr", "c:wrkr", "c:orig",
            "c:kthr", "a tot", "b tot", "c tot", "b/c");
    for (size_t i = 0; i < n_rows; i++) {
        const bench_cpu *a = &rows[i].cpu[BENCH_INPROC], *b = &rows[i].cpu[BENCH_CURL], *c = &rows[i].cpu[BENCH_VERIFETCH];
        fprintf(out, "%-4s %-5s %4u | %6.2f %6.2f | %6.2f %6.2f %6.2f | %6.2f %6.2f %6.2f %6.2f %6.2f | %6.2f %6.2f "
                     "%6.2f | %6.2f\n",
                rows[i].page, rows[i].scheme, rows[i].concurrency, a->client_ms, a->origin_ms, b->curl_ms, b->client_ms,
                b->origin_ms, c->client_ms, c->broker_ms, c->workers_ms + c->zygote_ms, c->origin_ms, c->kthreads_ms,
                bench_cpu_total(a), bench_cpu_total(b), bench_cpu_total(c),
                ratio(bench_cpu_total(b), bench_cpu_total(c)));
    }
    fprintf(out, "  kthr: kernel threads (machine-wide, e.g. network-namespace teardown); totals include them.\n"
                 "  b/c: the throughput ratio c/b a CPU-bound machine would give (total CPU per fetch); "
                 "far less disturbed by other load than the measured one\n");

    fprintf(out, "\nmemory (KiB)\n");
    fprintf(out, "  broker VmRSS after start           %8ld\n", m->broker_start_rss_kib);
    fprintf(out, "  broker VmHWM after the grid        %8ld\n", m->broker_hwm_grid_kib);
    static const char *pages[] = { "10k", "1m" }, *schemes[] = { "http", "https" };
    for (int p = 0; p < 2; p++)
        fprintf(out, "  broker VmHWM, 64 concurrent %-3s    %8ld  (%u lookups, %u failed, median %.1f ms%s)\n",
                pages[p], m->broker_hwm_c64_kib[p], m->c64[p].done, m->c64[p].failed, m->c64[p].median_ms,
                m->hwm_reset_ok ? "" : "; HWM not reset between phases");
    fprintf(out, "  worker peak RSS, standalone launcher, wait4 ru_maxrss, max of %u runs:\n", m->worker_reps);
    for (int p = 0; p < 2; p++)
        for (int s = 0; s < 2; s++) {
            const bench_worker_mem *w = &m->worker[p][s];
            fprintf(out, "    %-3s %-5s  maxrss %6ld  (while sending: VmHWM %ld = anon %ld + libs/file %ld; launcher %ld; "
                         "CPU %.1f ms)%s\n",
                    pages[p], schemes[s], w->maxrss_kib, w->hwm_sample_kib, w->anon_kib, w->file_kib, w->launcher_kib,
                    w->cpu_us / 1e3, w->ok ? "" : "  FAILED");
        }
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
    fprintf(out, "\ntargets (issue 6, item 2)\n");
    for (size_t i = 0; i < nt; i++)
        fprintf(out, "  %-62s %8.2f %-3s %s %5.1f  %s\n", t[i].name, t[i].value, t[i].unit,
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
    static const char *mode_names[] = { "inproc", "curl_process", "verifetch" };
    json_t *cells = json_array();
    for (size_t i = 0; i < n_rows; i++) {
        const bench_row *r = &rows[i];
        json_t *modes = json_object();
        for (int k = 0; k < BENCH_MODES; k++) {
            json_t *st = stats_json(&r->mode[k]);
            json_object_set_new(st, "cpu_per_fetch", cpu_json(&r->cpu[k]));
            json_object_set_new(modes, mode_names[k], st);
        }
        const bench_stats *a = &r->mode[BENCH_INPROC], *b = &r->mode[BENCH_CURL], *c = &r->mode[BENCH_VERIFETCH];
        json_array_append_new(cells, json_pack("{s:s, s:s, s:I, s:I, s:o, s:f, s:f, s:f, s:f, s:f}",
            "page", r->page, "scheme", r->scheme, "concurrency", (json_int_t)r->concurrency,
            "warmup", (json_int_t)r->plan.warmup, "modes", modes,
            "c_over_a_median", ratio(c->median_ms, a->median_ms), "c_over_a_p99", ratio(c->p99_ms, a->p99_ms),
            "c_over_b_throughput", ratio(c->per_s, b->per_s), "c_minus_a_median_ms", c->median_ms - a->median_ms,
            "c_over_b_cpu_bound_throughput", ratio(bench_cpu_total(&r->cpu[BENCH_CURL]),
                                                   bench_cpu_total(&r->cpu[BENCH_VERIFETCH]))));
    }
    static const char *pages[] = { "10k", "1m" }, *schemes[] = { "http", "https" };
    json_t *workers = json_object();
    for (int p = 0; p < 2; p++)
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
    json_t *memory = json_pack("{s:I, s:I, s:b, s:{s:I, s:I}, s:{s:o, s:o}, s:I, s:o, s:o, s:{s:I, s:I}, "
                               "s:{s:I, s:I, s:I, s:I, s:I}}",
        "broker_start_rss_kib", (json_int_t)m->broker_start_rss_kib,
        "broker_hwm_after_grid_kib", (json_int_t)m->broker_hwm_grid_kib,
        "hwm_reset_between_phases", m->hwm_reset_ok,
        "broker_hwm_c64_kib", "10k_http", (json_int_t)m->broker_hwm_c64_kib[0],
        "1m_http", (json_int_t)m->broker_hwm_c64_kib[1],
        "c64_lookups", "10k_http", stats_json(&m->c64[0]), "1m_http", stats_json(&m->c64[1]),
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
    json_t *doc = json_pack("{s:s, s:{s:I, s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:b}, s:o, s:o, s:o}",
        "schema", "verifetch.bench/v1",
        "run", "nproc", (json_int_t)info->nproc, "kernel", u.release, "machine", u.machine,
        "curl", curl_version(), "body_type", info->body_type, "ca", info->ca_kind, "scale", info->scale,
        "total_s", info->total_s,
        "loadavg_before", info->load_before, "loadavg_after", info->load_after,
        "foreign_cpu_s", info->foreign_cpu_s, "machine_cpu_s", info->machine_cpu_s, "quiet", bench_run_quiet(info),
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
