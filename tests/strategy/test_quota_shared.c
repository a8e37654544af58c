/* A pod's own concurrency share beside a fleet store (a fake hook that
 * answers when the test says so): a lookup the store admits is not refused
 * behind one the store is about to refuse, it waits for that verdict; behind
 * one the store admitted it is refused; the server thread's try_acquire
 * never waits; a store that cannot answer leaves the local bucket to decide
 * and keeps no slot for itself. */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include <criterion/criterion.h>

#include "broker/api/quota.h"

#define TENANT "t"

/* What the store says to the calling thread's next acquire. */
typedef struct {
    bool hold;               /* wait for the test's go before answering */
    int decided;             /* the hook's return: 1 decided, 0 store unavailable */
    vf_quota_verdict verdict;
} store_answer;

static __thread store_answer answer;
static sem_t entered;        /* a held call reached the store */
static sem_t go;             /* the held call may answer */
static atomic_int store_calls;

static int fake_store(void *ctx, const char *name, const vf_quota_limits *l, vf_quota_verdict *v,
                      unsigned *retry_after_s)
{
    (void)ctx;
    (void)name;
    cr_assert_eq(l->max_concurrent, 0, "the pod's share went to the store");
    atomic_fetch_add(&store_calls, 1);
    if (answer.hold) {
        sem_post(&entered);
        sem_wait(&go);
    }
    *v = answer.verdict;
    *retry_after_s = answer.verdict == VF_QUOTA_OK ? 0 : 3;
    return answer.decided;
}

static void no_release(void *ctx, const char *name)
{
    (void)ctx;
    (void)name;
}

static vf_quota *pod_share_of_one(void)
{
    cr_assert_eq(sem_init(&entered, 0, 0), 0);
    cr_assert_eq(sem_init(&go, 0, 0), 0);
    atomic_store(&store_calls, 0);
    vf_quota *q = vf_quota_new();
    cr_assert_not_null(q);
    vf_quota_limits l = { .max_concurrent = 1, .requests_per_minute = 600, .concurrent_per_pod = true };
    cr_assert_eq(vf_quota_configure(q, TENANT, &l, 0), 0);
    vf_quota_shared hook = { fake_store, no_release, NULL };
    vf_quota_set_shared(q, &hook);
    return q;
}

typedef struct {
    vf_quota *q;
    store_answer answer;
    bool try_only;
    vf_quota_verdict verdict;
    atomic_bool done;
    pthread_t th;
} lookup;

static void *run_lookup(void *arg)
{
    lookup *l = arg;
    answer = l->answer;
    unsigned retry = 0;
    l->verdict = l->try_only ? vf_quota_try_acquire(l->q, TENANT, 1, &retry)
                             : vf_quota_acquire(l->q, TENANT, 1, &retry);
    atomic_store(&l->done, true);
    return NULL;
}

static void start(lookup *l)
{
    atomic_init(&l->done, false);
    cr_assert_eq(pthread_create(&l->th, NULL, run_lookup, l), 0);
}

/* A lookup whose store verdict is held: it holds the pod's only slot, undecided. */
static void start_held(lookup *l)
{
    start(l);
    cr_assert_eq(sem_wait(&entered), 0);
}

static void pause_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* held takes the pod's only slot and waits on the store; next asks meanwhile.
 * After ms the store answers held; both are joined. True when next was still
 * waiting at that moment. */
static bool race_behind(lookup *held, lookup *next, long ms)
{
    start_held(held);
    start(next);
    pause_ms(ms);
    bool waited = !atomic_load(&next->done);
    sem_post(&go);
    pthread_join(held->th, NULL);
    pthread_join(next->th, NULL);
    return waited;
}

Test(quota_shared, a_lookup_the_store_admits_waits_for_one_it_refuses_instead_of_being_refused)
{
    vf_quota *q = pod_share_of_one();
    lookup refused = { .q = q, .answer = { .hold = true, .decided = 1, .verdict = VF_QUOTA_RATE } };
    lookup admitted = { .q = q, .answer = { .decided = 1, .verdict = VF_QUOTA_OK } };
    cr_assert(race_behind(&refused, &admitted, 150), "the second lookup did not wait for the first one's verdict (%s)",
              vf_quota_verdict_name(admitted.verdict));
    cr_assert_eq(refused.verdict, VF_QUOTA_RATE);
    cr_assert_eq(admitted.verdict, VF_QUOTA_OK, "refused for %s behind a lookup the store refused",
                 vf_quota_verdict_name(admitted.verdict));
    cr_assert_eq(vf_quota_in_flight(q, TENANT), 1, "the admitted lookup holds the slot");
    vf_quota_release(q, TENANT);
    cr_assert_eq(vf_quota_in_flight(q, TENANT), 0);
    vf_quota_free(q);
}

Test(quota_shared, behind_a_lookup_the_store_admitted_the_wait_ends_in_a_concurrency_refusal)
{
    vf_quota *q = pod_share_of_one();
    lookup first = { .q = q, .answer = { .hold = true, .decided = 1, .verdict = VF_QUOTA_OK } };
    lookup second = { .q = q, .answer = { .decided = 1, .verdict = VF_QUOTA_OK } };
    race_behind(&first, &second, 100);
    cr_assert_eq(first.verdict, VF_QUOTA_OK);
    cr_assert_eq(second.verdict, VF_QUOTA_CONCURRENCY, "a share of 1 admitted two (%s)",
                 vf_quota_verdict_name(second.verdict));
    cr_assert_eq(atomic_load(&store_calls), 1, "the refused lookup asked the store");
    cr_assert_eq(vf_quota_in_flight(q, TENANT), 1);
    vf_quota_release(q, TENANT);
    vf_quota_free(q);
}

Test(quota_shared, try_acquire_refuses_at_once_while_the_share_is_undecided)
{
    vf_quota *q = pod_share_of_one();
    lookup held = { .q = q, .answer = { .hold = true, .decided = 1, .verdict = VF_QUOTA_RATE } };
    lookup server = { .q = q, .answer = { .decided = 1, .verdict = VF_QUOTA_OK }, .try_only = true };
    start_held(&held);
    start(&server);
    pthread_join(server.th, NULL);   /* returns while the held verdict is still outstanding */
    cr_assert_eq(server.verdict, VF_QUOTA_CONCURRENCY);
    sem_post(&go);
    pthread_join(held.th, NULL);
    cr_assert_eq(vf_quota_in_flight(q, TENANT), 0, "a refused verdict kept its slot");
    vf_quota_free(q);
}

Test(quota_shared, a_store_that_cannot_answer_leaves_the_local_bucket_to_decide)
{
    vf_quota *q = pod_share_of_one();
    lookup down = { .q = q, .answer = { .hold = true, .decided = 0, .verdict = VF_QUOTA_RATE } };
    lookup waiting = { .q = q, .answer = { .decided = 0, .verdict = VF_QUOTA_RATE } };
    race_behind(&down, &waiting, 100);
    /* Locally, a share of 1: exactly one of the two is admitted, whichever came first. */
    cr_assert_eq((down.verdict == VF_QUOTA_OK) + (waiting.verdict == VF_QUOTA_OK), 1, "%s, %s",
                 vf_quota_verdict_name(down.verdict), vf_quota_verdict_name(waiting.verdict));
    cr_assert_eq(vf_quota_in_flight(q, TENANT), 1, "the undecided reservation was not given back");
    vf_quota_release(q, TENANT);
    cr_assert_eq(vf_quota_in_flight(q, TENANT), 0);
    vf_quota_free(q);
}
