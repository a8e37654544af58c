/* Concurrency smoke tests: threads hammer the circuit registry, the ordering,
 * quotas and metrics at once; totals must add up and the single-probe rule
 * must hold under races. Bounded: 8 threads, a few thousand operations each. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "broker/api/metrics.h"
#include "broker/api/quota.h"
#include "policy/ordering.h"

#define THREADS 8
#define ROUNDS  200
#define OPS     2000

typedef struct {
    pthread_barrier_t start;
    vf_circuit_registry *circuits;
    vf_quota *quota;
    vf_metrics *metrics;
    atomic_uint admitted;
    atomic_uint holding;
    atomic_uint max_holding;
    atomic_uint granted;
    uint64_t now;
    unsigned id_seed;
} shared;

static void run_threads(void *(*fn)(void *), shared *s)
{
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, fn, s), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
}

/* ---- exactly one probe per half-open round ---- */

static void *race_for_probe(void *arg)
{
    shared *s = arg;
    pthread_barrier_wait(&s->start);
    vf_circuit_ticket t;
    if (vf_circuit_admit(s->circuits, "t", "p", NULL, s->now, &t, NULL)) {
        atomic_fetch_add(&s->admitted, 1);
        vf_circuit_record(s->circuits, &t, VF_HEALTH_TRANSPORT_ERROR, -1, s->now);   /* reopens */
    }
    return NULL;
}

Test(threads, one_probe_per_half_open_round)
{
    vf_circuit_params p;
    vf_circuit_params_default(&p);
    p.failure_threshold = 1;
    p.cooldown_ms = 10;
    shared s = { .circuits = vf_circuit_registry_new(&p) };
    cr_assert_not_null(s.circuits);
    pthread_barrier_init(&s.start, NULL, THREADS);
    vf_circuit_ticket t;
    vf_circuit_ticket_observe(&t, "t", "p", NULL);
    vf_circuit_record(s.circuits, &t, VF_HEALTH_TRANSPORT_ERROR, -1, 0);
    for (unsigned round = 1; round <= ROUNDS; round++) {
        s.now = round * 10;   /* each round starts exactly when the cooldown ends */
        atomic_store(&s.admitted, 0);
        run_threads(race_for_probe, &s);
        cr_assert_eq(atomic_load(&s.admitted), 1, "round %u admitted %u", round, atomic_load(&s.admitted));
    }
    pthread_barrier_destroy(&s.start);
    vf_circuit_registry_free(s.circuits);
}

static void *order_race(void *arg)
{
    shared *s = arg;
    vf_provider_config ps[2];
    memset(ps, 0, sizeof ps);
    ps[0].name = (char *)"primary";
    ps[1].name = (char *)"secondary";
    vf_order_config cfg = { .strategy = VF_ORDER_HEALTH };
    vf_order_input in = { .tenant = "t", .providers = ps, .n_providers = 2, .host = "example.com",
                          .cfg = &cfg, .circuits = s->circuits, .now_ms = s->now };
    vf_order o;
    pthread_barrier_wait(&s->start);
    if (vf_order_compute(&in, &o) == 0 && o.n == 2)
        atomic_fetch_add(&s->admitted, 1);
    /* Hold the probe until everyone has ordered, or a late thread could take it next. */
    pthread_barrier_wait(&s->start);
    vf_order_release_unused(&o, s->circuits);
    return NULL;
}

Test(threads, concurrent_orders_share_one_probe)
{
    vf_circuit_params p;
    vf_circuit_params_default(&p);
    p.failure_threshold = 1;
    shared s = { .circuits = vf_circuit_registry_new(&p), .now = 30000 };
    pthread_barrier_init(&s.start, NULL, THREADS);
    vf_circuit_ticket t;
    vf_circuit_ticket_observe(&t, "t", "primary", NULL);
    vf_circuit_record(s.circuits, &t, VF_HEALTH_TRANSPORT_ERROR, -1, 0);
    run_threads(order_race, &s);
    cr_assert_leq(atomic_load(&s.admitted), 1, "more than one lookup probed primary");
    cr_assert_geq(atomic_load(&s.admitted), 1, "nobody probed primary");
    pthread_barrier_destroy(&s.start);
    vf_circuit_registry_free(s.circuits);
}

/* ---- host table stays bounded under a flood ---- */

static void *flood_hosts(void *arg)
{
    shared *s = arg;
    unsigned me = atomic_fetch_add(&s->granted, 1);
    for (unsigned i = 0; i < OPS; i++) {
        char host[48];
        snprintf(host, sizeof host, "h%u-%u.example", me, i);
        vf_circuit_ticket t;
        if (vf_circuit_admit(s->circuits, "t", "p", host, i, &t, NULL))
            vf_circuit_record(s->circuits, &t, i % 2 ? VF_HEALTH_UNUSABLE_CONTENT : VF_HEALTH_OK, (int64_t)i, i);
    }
    return NULL;
}

Test(threads, host_table_stays_bounded)
{
    vf_circuit_params p;
    vf_circuit_params_default(&p);
    p.max_domains = 64;
    shared s = { .circuits = vf_circuit_registry_new(&p) };
    run_threads(flood_hosts, &s);
    vf_circuit_snapshot snap;
    cr_assert(vf_circuit_snapshot_get(s.circuits, "t", "p", NULL, 0, &snap));
    cr_assert_eq(snap.tracked_hosts, 64);
    cr_assert_eq(snap.state, VF_CIRCUIT_CLOSED, "content failures never open the provider-wide circuit");
    vf_circuit_registry_free(s.circuits);
}

/* ---- quotas ---- */

static void *hold_slots(void *arg)
{
    shared *s = arg;
    pthread_barrier_wait(&s->start);
    for (unsigned i = 0; i < OPS; i++) {
        if (vf_quota_acquire(s->quota, "t", 0, NULL) != VF_QUOTA_OK)
            continue;
        unsigned now = atomic_fetch_add(&s->holding, 1) + 1;
        unsigned seen = atomic_load(&s->max_holding);
        while (now > seen && !atomic_compare_exchange_weak(&s->max_holding, &seen, now))
            ;
        atomic_fetch_sub(&s->holding, 1);
        vf_quota_release(s->quota, "t");
    }
    return NULL;
}

Test(threads, concurrency_slots_never_oversubscribed)
{
    shared s = { .quota = vf_quota_new() };
    vf_quota_limits l = { .max_concurrent = 3 };
    cr_assert_eq(vf_quota_configure(s.quota, "t", &l, 0), 0);
    pthread_barrier_init(&s.start, NULL, THREADS);
    run_threads(hold_slots, &s);
    cr_assert_leq(atomic_load(&s.max_holding), 3);
    cr_assert_geq(atomic_load(&s.max_holding), 1);
    cr_assert_eq(vf_quota_in_flight(s.quota, "t"), 0, "every slot came back");
    pthread_barrier_destroy(&s.start);
    vf_quota_free(s.quota);
}

static void *spend_tokens(void *arg)
{
    shared *s = arg;
    pthread_barrier_wait(&s->start);
    for (unsigned i = 0; i < OPS; i++) {
        if (vf_quota_acquire(s->quota, "t", 1000, NULL) == VF_QUOTA_OK) {
            atomic_fetch_add(&s->granted, 1);
            vf_quota_release(s->quota, "t");
        }
    }
    return NULL;
}

Test(threads, token_bucket_grants_exactly_its_burst)
{
    shared s = { .quota = vf_quota_new() };
    vf_quota_limits l = { .requests_per_minute = 600, .burst = 250 };
    cr_assert_eq(vf_quota_configure(s.quota, "t", &l, 1000), 0);
    pthread_barrier_init(&s.start, NULL, THREADS);
    run_threads(spend_tokens, &s);
    cr_assert_eq(atomic_load(&s.granted), 250, "time stood still, so only the burst is granted");
    pthread_barrier_destroy(&s.start);
    vf_quota_free(s.quota);
}

/* ---- metrics ---- */

static void *count_and_render(void *arg)
{
    shared *s = arg;
    pthread_barrier_wait(&s->start);
    for (unsigned i = 0; i < OPS; i++) {
        vf_metrics_count_attempt(s->metrics, "t", i % 2 ? "a" : "b", VF_OUTCOME_OK);
        vf_metrics_count_lookup(s->metrics, "t", VF_LOOKUP_SUCCESS);
        vf_metrics_observe_lookup(s->metrics, "t", 0.01);
        vf_metrics_workers_add(s->metrics, 1);
        vf_metrics_workers_add(s->metrics, -1);
        if (i % 500 == 0)
            free(vf_metrics_render(s->metrics, "t", NULL));
    }
    return NULL;
}

static double sample(const char *text, const char *series)
{
    const char *at = strstr(text, series);
    return at ? strtod(at + strlen(series), NULL) : -1;
}

Test(threads, metric_totals_add_up)
{
    const char *providers[] = { "a", "b" };
    shared s = { .metrics = vf_metrics_new() };
    cr_assert_eq(vf_metrics_add_tenant(s.metrics, "t", providers, 2), 0);
    pthread_barrier_init(&s.start, NULL, THREADS);
    run_threads(count_and_render, &s);
    char *text = vf_metrics_render(s.metrics, NULL, NULL);
    cr_assert_not_null(text);
    double half = THREADS * OPS / 2;
    cr_assert(sample(text, "verifetch_attempts_total{tenant=\"t\",provider=\"a\",outcome=\"ok\"} ") == half);
    cr_assert(sample(text, "verifetch_attempts_total{tenant=\"t\",provider=\"b\",outcome=\"ok\"} ") == half);
    cr_assert(sample(text, "verifetch_lookups_total{tenant=\"t\",status=\"success\"} ") == THREADS * OPS);
    cr_assert(sample(text, "verifetch_lookup_seconds_count{tenant=\"t\"} ") == THREADS * OPS);
    cr_assert(sample(text, "verifetch_lookup_seconds_bucket{tenant=\"t\",le=\"0.05\"} ") == THREADS * OPS);
    cr_assert(sample(text, "verifetch_workers_active ") == 0);
    free(text);
    pthread_barrier_destroy(&s.start);
    vf_metrics_free(s.metrics);
}
