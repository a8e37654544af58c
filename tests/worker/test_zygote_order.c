/* Issue 14: lookups waiting for a zygote worker are served first come,
 * first served. The zygote is frozen with its ready workers taken, lookups
 * join the wait one after another, and once it runs again the workers it
 * announces must go out in that same order. Before, every waiter polled the
 * control socket and whichever the scheduler woke first took the worker. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker/spawn/zygote_client.h"
#include "harness.h"
#include "proc_inspect.h"

#define WAITERS 12
#define SPARE 8   /* more than the pool: every ready worker is taken */

typedef struct {
    int arrival;
    int served;   /* 0-based rank among the waiters, -1 if not served */
    unsigned seq; /* the line's number for the worker it got */
    vf_zygote_spawn_rc rc;
    char detail[200];
    atomic_int tid;
} waiter;

static void *wait_for_worker(void *arg)
{
    waiter *wt = arg;
    atomic_store(&wt->tid, (int)gettid());
    vf_zygote_worker w;
    wt->rc = vf_zygote_take(vf_now_ms() + 20000, -1, &w, wt->detail, sizeof wt->detail);
    /* The rank comes from the line itself: a counter bumped here, after
     * the line was left, let a preempted waiter be overtaken on its way
     * back and read as served out of order (3-5 runs in 20 at load 40). */
    wt->seq = w.seq;
    if (wt->rc == VF_ZYGOTE_SPAWNED)
        vf_zygote_release(&w);   /* the zygote kills and reaps it */
    return NULL;
}

/* Polls until n lookups stand in line, or fails after 5 s. */
static void until_waiting(unsigned n)
{
    int64_t until = vf_now_ms() + 5000;
    while (vf_zygote_waiters() < n) {
        cr_assert_lt(vf_now_ms(), until, "%u of %u lookups in line", vf_zygote_waiters(), n);
        usleep(1000);
    }
}

TestSuite(zygote_order, .timeout = 60);

/* Starts a zygote, lets its pool fill, freezes it and takes every worker it
 * had announced: the next lookups have to wait. Returns its pid. */
static pid_t start_frozen(vf_zygote_worker *spare, int *n_spare)
{
    char err[256];
    vf_zygote_options o = { .worker_path = worker_path("verifetch-worker-testhooks"), .pool = 2 };
    cr_assert_eq(vf_zygote_start(&o, err, sizeof err), 0, "zygote: %s", err);
    usleep(300000);   /* the pool fills */
    vf_zygote_status st;
    vf_zygote_get_status(&st);
    cr_assert(st.running && st.pid > 0);
    kill(st.pid, SIGSTOP);
    char detail[200];
    *n_spare = 0;
    while (*n_spare < SPARE &&
           vf_zygote_take(vf_now_ms() + 150, -1, &spare[*n_spare], detail, sizeof detail) == VF_ZYGOTE_SPAWNED)
        (*n_spare)++;
    cr_assert_lt(*n_spare, SPARE, "a stopped zygote kept announcing workers");
    return st.pid;
}

Test(zygote_order, waiting_lookups_get_workers_in_arrival_order)
{
    vf_zygote_worker spare[SPARE];
    int n_spare;
    pid_t zygote = start_frozen(spare, &n_spare);
    pthread_t th[WAITERS];
    waiter w[WAITERS];
    /* One at a time: each is in line before the next one starts. */
    for (int i = 0; i < WAITERS; i++) {
        w[i] = (waiter){ .arrival = i, .served = -1 };
        cr_assert_eq(pthread_create(&th[i], NULL, wait_for_worker, &w[i]), 0);
        until_waiting((unsigned)i + 1);
    }
    kill(zygote, SIGCONT);
    for (int i = 0; i < WAITERS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < n_spare; i++)
        vf_zygote_release(&spare[i]);
    for (int i = 0; i < WAITERS; i++)
        for (int j = 0; j < WAITERS && w[i].rc == VF_ZYGOTE_SPAWNED; j++)
            w[i].served += w[j].rc == VF_ZYGOTE_SPAWNED && w[j].seq <= w[i].seq;
    char order[WAITERS * 4 + 1];
    size_t len = 0;
    for (int i = 0; i < WAITERS; i++)
        len += (size_t)snprintf(order + len, sizeof order - len, " %d", w[i].served);
    for (int i = 0; i < WAITERS; i++) {
        cr_assert_eq(w[i].rc, VF_ZYGOTE_SPAWNED, "waiter %d: %s", i, w[i].detail);
        cr_assert_eq(w[i].served, i, "served out of arrival order; rank by arrival:%s", order);
    }
    vf_zygote_stop();
}

/* How many times thread tid of this process went to sleep voluntarily. */
static long sleeps_of(int tid)
{
    long n = pi_status_number(tid, "voluntary_ctxt_switches");
    cr_assert_geq(n, 0, "no voluntary_ctxt_switches for thread %d", tid);
    return n;
}

/* Only the head of the line watches the zygote; a lookup behind it sleeps
 * until its turn. Before, every waiter woke every 50 ms to poll the socket. */
Test(zygote_order, a_lookup_behind_the_head_sleeps_until_its_turn)
{
    vf_zygote_worker spare[SPARE];
    int n_spare;
    pid_t zygote = start_frozen(spare, &n_spare);
    pthread_t th[2];
    waiter w[2];
    for (int i = 0; i < 2; i++) {
        w[i] = (waiter){ .arrival = i, .served = -1 };
        cr_assert_eq(pthread_create(&th[i], NULL, wait_for_worker, &w[i]), 0);
        until_waiting((unsigned)i + 1);
    }
    long before = sleeps_of(atomic_load(&w[1].tid));
    usleep(400000);
    long woke = sleeps_of(atomic_load(&w[1].tid)) - before;
    kill(zygote, SIGCONT);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < n_spare; i++)
        vf_zygote_release(&spare[i]);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(w[i].rc, VF_ZYGOTE_SPAWNED, "waiter %d: %s", i, w[i].detail);
    cr_assert_leq(woke, 2, "the second in line woke %ld times in 400 ms", woke);
    vf_zygote_stop();
}
