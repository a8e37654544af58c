/* Worker slots: strictly first come, first served; a cancelled or timed-out
 * waiter leaves the queue; resizing serves waiters at once and shrinking
 * retires slots only as they come back. Real threads, real clocks. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker/lookup/cancel.h"
#include "broker/spawn/worker_slot.h"
#include "ipc/ipc_frame.h"
#include "proc_inspect.h"

typedef struct {
    vf_worker_slots *slots;
    int id;
    int cancel_fd;
    int64_t deadline_ms;
    vf_slot_rc rc;
    int64_t done_ms;
    atomic_int tid;
} waiter;

static atomic_int order[8];
static atomic_int served;

static void *wait_slot(void *arg)
{
    waiter *w = arg;
    atomic_store(&w->tid, (int)gettid());
    w->rc = vf_worker_slot_take(w->slots, w->deadline_ms, w->cancel_fd);
    w->done_ms = vf_now_ms();
    if (w->rc == VF_SLOT_TAKEN)
        order[atomic_fetch_add(&served, 1)] = w->id;
    return NULL;
}

static unsigned waiting(vf_worker_slots *s)
{
    vf_worker_slots_snapshot snap;
    vf_worker_slots_read(s, &snap);
    return snap.waiters;
}

static void until_waiting(vf_worker_slots *s, unsigned n)
{
    for (int i = 0; i < 500 && waiting(s) != n; i++)
        usleep(2000);
    cr_assert_eq(waiting(s), n);
}

Test(worker_slots, waiters_are_served_in_arrival_order)
{
    vf_worker_slots s;
    vf_worker_slots_init(&s, 1);
    cr_assert_eq(vf_worker_slot_take(&s, vf_now_ms() + 100, -1), VF_SLOT_TAKEN);
    waiter w[5];
    pthread_t th[5];
    atomic_store(&served, 0);
    for (int i = 0; i < 5; i++) {
        w[i] = (waiter){ .slots = &s, .id = i, .cancel_fd = -1, .deadline_ms = vf_now_ms() + 10000 };
        pthread_create(&th[i], NULL, wait_slot, &w[i]);
        until_waiting(&s, (unsigned)i + 1);   /* arrival order is known */
    }
    for (int i = 0; i < 5; i++) {
        vf_worker_slot_give(&s);
        for (int k = 0; k < 500 && atomic_load(&served) != i + 1; k++)
            usleep(2000);
    }
    for (int i = 0; i < 5; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(order[i], i, "slot %d went to waiter %d", i, order[i]);
    vf_worker_slots_destroy(&s);
}

Test(worker_slots, a_cancelled_waiter_leaves_within_100_ms)
{
    vf_worker_slots s;
    vf_worker_slots_init(&s, 1);
    cr_assert_eq(vf_worker_slot_take(&s, vf_now_ms() + 100, -1), VF_SLOT_TAKEN);
    vf_cancel c;
    cr_assert_eq(vf_cancel_init(&c), 0);
    waiter w = { .slots = &s, .cancel_fd = vf_cancel_fd(&c), .deadline_ms = vf_now_ms() + 10000 };
    pthread_t th;
    pthread_create(&th, NULL, wait_slot, &w);
    until_waiting(&s, 1);
    int64_t fired = vf_now_ms();
    vf_cancel_fire(&c);
    pthread_join(th, NULL);
    cr_assert_eq(w.rc, VF_SLOT_CANCELLED);
    cr_assert_lt(w.done_ms - fired, 100);
    cr_assert_eq(waiting(&s), 0);
    /* The slot it never got is still ours to give, and then free. */
    vf_worker_slot_give(&s);
    cr_assert_eq(vf_worker_slot_take(&s, vf_now_ms() + 100, -1), VF_SLOT_TAKEN);
    vf_cancel_destroy(&c);
    vf_worker_slots_destroy(&s);
}

Test(worker_slots, a_timed_out_waiter_does_not_block_the_next)
{
    vf_worker_slots s;
    vf_worker_slots_init(&s, 1);
    cr_assert_eq(vf_worker_slot_take(&s, vf_now_ms() + 100, -1), VF_SLOT_TAKEN);
    cr_assert_eq(vf_worker_slot_take(&s, vf_now_ms() + 30, -1), VF_SLOT_TIMEOUT);
    vf_worker_slot_give(&s);
    cr_assert_eq(vf_worker_slot_take(&s, vf_now_ms() + 30, -1), VF_SLOT_TAKEN);
    vf_worker_slots_destroy(&s);
}

Test(worker_slots, resize_grows_at_once_and_shrinks_as_slots_return)
{
    vf_worker_slots s;
    vf_worker_slots_init(&s, 1);
    cr_assert_eq(vf_worker_slot_take(&s, vf_now_ms() + 100, -1), VF_SLOT_TAKEN);
    waiter w = { .slots = &s, .cancel_fd = -1, .deadline_ms = vf_now_ms() + 10000 };
    pthread_t th;
    pthread_create(&th, NULL, wait_slot, &w);
    until_waiting(&s, 1);
    cr_assert_eq(vf_worker_slots_resize(&s, 3), 0);
    pthread_join(th, NULL);
    cr_assert_eq(w.rc, VF_SLOT_TAKEN, "growing serves the waiter at once");
    cr_assert_eq(vf_worker_slot_take(&s, vf_now_ms() + 100, -1), VF_SLOT_TAKEN);
    cr_assert_eq(vf_worker_slots_resize(&s, 1), 0);
    vf_worker_slots_snapshot snap;
    vf_worker_slots_read(&s, &snap);
    cr_assert_eq(snap.in_use, 3, "shrinking kills nothing");
    vf_worker_slot_give(&s);
    vf_worker_slot_give(&s);
    cr_assert_eq(vf_worker_slot_take(&s, vf_now_ms() + 30, -1), VF_SLOT_TIMEOUT, "still one in use of one");
    vf_worker_slot_give(&s);
    cr_assert_eq(vf_worker_slot_take(&s, vf_now_ms() + 30, -1), VF_SLOT_TAKEN);
    cr_assert_eq(vf_worker_slots_resize(&s, 0), -1);
    vf_worker_slots_destroy(&s);
}

/* How many times thread tid of this process went to sleep voluntarily. */
static long sleeps_of(int tid)
{
    long n = pi_status_number(tid, "voluntary_ctxt_switches");
    cr_assert_geq(n, 0, "no voluntary_ctxt_switches for thread %d", tid);
    return n;
}

/* A queued lookup that can be cancelled sleeps until it is served, cancelled
 * or out of time. It used to wake every 20 ms to look at its cancel fd: at
 * 1,024 clients the 128 queued lookups cost the broker 6,400 wake-ups a
 * second. */
Test(worker_slots, a_cancellable_waiter_sleeps_until_it_is_served)
{
    vf_worker_slots s;
    vf_worker_slots_init(&s, 1);
    cr_assert_eq(vf_worker_slot_take(&s, vf_now_ms() + 100, -1), VF_SLOT_TAKEN);
    vf_cancel c;
    cr_assert_eq(vf_cancel_init(&c), 0);
    waiter w = { .slots = &s, .cancel_fd = vf_cancel_fd(&c), .deadline_ms = vf_now_ms() + 10000 };
    pthread_t th;
    pthread_create(&th, NULL, wait_slot, &w);
    until_waiting(&s, 1);
    long before = sleeps_of(atomic_load(&w.tid));
    usleep(500000);
    long woke = sleeps_of(atomic_load(&w.tid)) - before;
    int64_t given = vf_now_ms();
    vf_worker_slot_give(&s);
    pthread_join(th, NULL);
    cr_assert_eq(w.rc, VF_SLOT_TAKEN);
    cr_assert_lt(w.done_ms - given, 100, "the grant woke it");
    cr_assert_leq(woke, 2, "a waiter woke %ld times in 500 ms without being served", woke);
    vf_worker_slot_give(&s);
    vf_cancel_destroy(&c);
    vf_worker_slots_destroy(&s);
}
