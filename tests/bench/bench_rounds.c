/* A cell's rounds summarised: medians of the per-round figures, and their
 * spread, so one disturbed round cannot move a headline number. */
#include "bench.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorted in place); the mean of the middle two for even n. */
static double median(double *v, unsigned n, bench_range *range)
{
    if (n == 0) {
        if (range)
            *range = (bench_range){ 0, 0 };
        return 0;
    }
    qsort(v, n, sizeof *v, cmp_double);
    if (range)
        *range = (bench_range){ v[0], v[n - 1] };
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median over the rounds in which mode k completed fetches, of the double at
 * `offset` in either the round's stats or its CPU split. */
static double over_rounds(const bench_row *r, int k, bool cpu, size_t offset, bench_range *range)
{
    double v[BENCH_MAX_ROUNDS];
    unsigned n = 0;
    for (unsigned q = 0; q < r->rounds; q++) {
        if (r->round[q][k].done == 0)
            continue;
        const char *base = cpu ? (const char *)&r->round_cpu[q][k] : (const char *)&r->round[q][k];
        memcpy(&v[n++], base + offset, sizeof v[0]);
    }
    return median(v, n, range);
}

#define STAT(field, range) over_rounds(r, k, false, offsetof(bench_stats, field), (range))
#define CPU(field) over_rounds(r, k, true, offsetof(bench_cpu, field), NULL)

void bench_row_summarise(bench_row *r)
{
    for (int k = 0; k < BENCH_MODES; k++) {
        bench_stats *m = &r->mode[k];
        memset(m, 0, sizeof *m);
        double totals[BENCH_MAX_ROUNDS];
        unsigned n_totals = 0;
        for (unsigned q = 0; q < r->rounds; q++) {
            const bench_stats *s = &r->round[q][k];
            m->requested += s->requested;
            m->done += s->done;
            m->failed += s->failed;
            m->wall_s += s->wall_s;
            if (!m->first_error[0] && s->first_error[0])
                memcpy(m->first_error, s->first_error, sizeof m->first_error);
            if (s->done > 0)
                totals[n_totals++] = bench_cpu_total(&r->round_cpu[q][k]);
        }
        m->median_ms = STAT(median_ms, &r->median_range[k]);
        m->p99_ms = STAT(p99_ms, NULL);
        m->mean_ms = STAT(mean_ms, NULL);
        m->per_s = STAT(per_s, &r->per_s_range[k]);
        m->min_ms = STAT(min_ms, NULL);
        m->max_ms = STAT(max_ms, NULL);
        bench_cpu *c = &r->cpu[k];
        c->client_ms = CPU(client_ms);
        c->curl_ms = CPU(curl_ms);
        c->broker_ms = CPU(broker_ms);
        c->workers_ms = CPU(workers_ms);
        c->zygote_ms = CPU(zygote_ms);
        c->origin_ms = CPU(origin_ms);
        c->kthreads_ms = CPU(kthreads_ms);
        r->cpu_total[k] = median(totals, n_totals, &r->cpu_total_range[k]);
    }
}
