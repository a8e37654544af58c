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
#include <unistd.h>

#include "broker/spawn/zygote_client.h"
#include "harness.h"

#define WAITERS 12
#define SPARE 8   /* more than the pool: every ready worker is taken */

typedef struct {
    int arrival;
    int served;   /* 0-based rank among the waiters, -1 if not served */
    vf_zygote_spawn_rc rc;
    char detail[200];
} waiter;

static atomic_int next_served;

static void *wait_for_worker(void *arg)
{
    waiter *wt = arg;
    vf_zygote_worker w;
    wt->rc = vf_zygote_take(vf_now_ms() + 20000, -1, &w, wt->detail, sizeof wt->detail);
    wt->served = wt->rc == VF_ZYGOTE_SPAWNED ? atomic_fetch_add(&next_served, 1) : -1;
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

Test(zygote_order, waiting_lookups_get_workers_in_arrival_order)
{
    char err[256];
    vf_zygote_options o = { .worker_path = worker_path("verifetch-worker-testhooks"), .pool = 2 };
    cr_assert_eq(vf_zygote_start(&o, err, sizeof err), 0, "zygote: %s", err);
    usleep(300000);   /* the pool fills */
    vf_zygote_status st;
    vf_zygote_get_status(&st);
    cr_assert(st.running && st.pid > 0);
    kill(st.pid, SIGSTOP);
    /* Take what it announced before it froze; it forks nothing more now. */
    vf_zygote_worker spare[SPARE];
    int n_spare = 0;
    char detail[200];
    while (n_spare < SPARE &&
           vf_zygote_take(vf_now_ms() + 150, -1, &spare[n_spare], detail, sizeof detail) == VF_ZYGOTE_SPAWNED)
        n_spare++;
    cr_assert_lt(n_spare, SPARE, "a stopped zygote kept announcing workers");
    atomic_store(&next_served, 0);
    pthread_t th[WAITERS];
    waiter w[WAITERS];
    /* One at a time: each is in line before the next one starts. */
    for (int i = 0; i < WAITERS; i++) {
        w[i] = (waiter){ .arrival = i, .served = -1 };
        cr_assert_eq(pthread_create(&th[i], NULL, wait_for_worker, &w[i]), 0);
        until_waiting((unsigned)i + 1);
    }
    kill(st.pid, SIGCONT);
    for (int i = 0; i < WAITERS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < n_spare; i++)
        vf_zygote_release(&spare[i]);
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
