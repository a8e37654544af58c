/* One benchmark cell: N fetches on C threads, warm-up first, then latency
 * percentiles and throughput over the measured phase only. */
#include "bench.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const bench_fetcher *f;
    const bench_target *t;
    const bench_plan *plan;
    pthread_barrier_t warm_start, warm_done;
    atomic_uint next_warm, next_measured, failed;
    atomic_bool stop;
    double *lat_ms;              /* per measured index; <0 = failed or never ran */
    pthread_mutex_t err_lock;
    char first_error[256];
} cell;

static void note_error(cell *c, const char *err)
{
    pthread_mutex_lock(&c->err_lock);
    if (!c->first_error[0])
        snprintf(c->first_error, sizeof c->first_error, "%s", err);
    pthread_mutex_unlock(&c->err_lock);
}

static void *run_thread(void *p)
{
    cell *c = p;
    void *state = c->f->thread_init ? c->f->thread_init(c->t) : NULL;
    char err[256];
    pthread_barrier_wait(&c->warm_start);
    while (atomic_fetch_add(&c->next_warm, 1) < c->plan->warmup) {
        err[0] = '\0';
        if (c->f->fetch(c->t, state, err, sizeof err) != 0) {
            atomic_fetch_add(&c->failed, 1);     /* a broken warm-up breaks the cell too */
            note_error(c, err);
        }
    }
    pthread_barrier_wait(&c->warm_done);
    /* Every thread leaves the barrier together, so each can start the cap clock. */
    double stop_at_ms = bench_now_ms() + c->plan->time_cap_s * 1e3;
    for (;;) {
        unsigned i = atomic_fetch_add(&c->next_measured, 1);
        if (i >= c->plan->requests || atomic_load(&c->stop))
            break;
        double t0 = bench_now_ms();
        err[0] = '\0';
        int rc = c->f->fetch(c->t, state, err, sizeof err);
        double t1 = bench_now_ms();
        if (rc == 0)
            c->lat_ms[i] = t1 - t0;
        else {
            atomic_fetch_add(&c->failed, 1);
            note_error(c, err);
        }
        if (t1 > stop_at_ms)
            atomic_store(&c->stop, true);
    }
    if (c->f->thread_done)
        c->f->thread_done(state);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static double percentile(const double *v, unsigned n, double p)
{
    if (n == 0)
        return 0;
    unsigned rank = (unsigned)(p / 100.0 * n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1];
}

static void summarize(cell *c, double wall_ms, bench_stats *out)
{
    unsigned n = 0;
    double sum = 0;
    for (unsigned i = 0; i < c->plan->requests; i++)
        if (c->lat_ms[i] >= 0) {
            c->lat_ms[n++] = c->lat_ms[i];
            sum += c->lat_ms[i];
        }
    qsort(c->lat_ms, n, sizeof *c->lat_ms, cmp_double);
    out->requested = c->plan->requests;
    out->done = n;
    out->failed = atomic_load(&c->failed);
    out->wall_s = wall_ms / 1e3;
    out->median_ms = percentile(c->lat_ms, n, 50);
    out->p99_ms = percentile(c->lat_ms, n, 99);
    out->mean_ms = n ? sum / n : 0;
    out->min_ms = n ? c->lat_ms[0] : 0;
    out->max_ms = n ? c->lat_ms[n - 1] : 0;
    out->per_s = wall_ms > 0 ? n / (wall_ms / 1e3) : 0;
    snprintf(out->first_error, sizeof out->first_error, "%s", c->first_error);
}

int bench_run_cell(const bench_fetcher *f, const bench_target *t, const bench_plan *plan,
                   bench_stats *out)
{
    memset(out, 0, sizeof *out);
    cell c = { .f = f, .t = t, .plan = plan };
    unsigned nt = plan->concurrency;
    c.lat_ms = malloc(sizeof *c.lat_ms * (plan->requests ? plan->requests : 1));
    pthread_t *th = calloc(nt, sizeof *th);
    if (!c.lat_ms || !th) {
        free(c.lat_ms);
        free(th);
        return -1;
    }
    for (unsigned i = 0; i < plan->requests; i++)
        c.lat_ms[i] = -1;
    pthread_mutex_init(&c.err_lock, NULL);
    pthread_barrier_init(&c.warm_start, NULL, nt + 1);
    pthread_barrier_init(&c.warm_done, NULL, nt + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1u << 20);
    unsigned started = 0;
    for (; started < nt; started++)
        if (pthread_create(&th[started], &attr, run_thread, &c) != 0)
            break;
    pthread_attr_destroy(&attr);
    if (started < nt) {
        fprintf(stderr, "bench: cannot start %u threads\n", nt);
        exit(1);
    }
    pthread_barrier_wait(&c.warm_start);
    /* Warm-up is untimed; the clock for the measured phase starts at warm_done. */
    pthread_barrier_wait(&c.warm_done);
    double m0 = bench_now_ms();
    for (unsigned i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    double m1 = bench_now_ms();
    summarize(&c, m1 - m0, out);
    pthread_barrier_destroy(&c.warm_start);
    pthread_barrier_destroy(&c.warm_done);
    pthread_mutex_destroy(&c.err_lock);
    free(c.lat_ms);
    free(th);
    /* Stopping at the time cap is not a failure; done < requested shows it. */
    return out->failed == 0 ? 0 : -1;
}
