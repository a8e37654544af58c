/* Deferred work reuses its threads: work handed out one piece after another
 * starts one thread; pieces running together each get a thread of their own
 * with the stack size lookups had; at most VF_WORK_IDLE_MAX (or the tuned
 * limit) wait once the work is done, and the waiting ones end after the idle
 * time; a work thread carries a name of its own. Each Test runs in a process of its own, so the counts start at 0. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "broker/api/work_threads.h"

static void pause_ms(long ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static vf_work_threads_stats counts(void)
{
    vf_work_threads_stats s;
    vf_work_threads_counts(&s);
    return s;
}

/* Polls for up to ms until at least `idle` threads wait (or, with exact, until
 * exactly `live` threads are left). */
static vf_work_threads_stats settle(unsigned idle, unsigned live, bool exact, long ms)
{
    vf_work_threads_stats s = counts();
    for (long waited = 0; waited < ms; waited += 2) {
        if (exact ? s.live == live && s.idle == idle : s.idle >= idle)
            break;
        pause_ms(2);
        s = counts();
    }
    return s;
}

static atomic_int done;
static atomic_bool gate_open;
static atomic_long stack_seen;
static char name_seen[16];

static void count_one(void *arg)
{
    (void)arg;
    atomic_fetch_add(&done, 1);
}

static void held_until_open(void *arg)
{
    (void)arg;
    while (!atomic_load(&gate_open))
        pause_ms(1);
    atomic_fetch_add(&done, 1);
}

static void note_stack(void *arg)
{
    (void)arg;
    pthread_attr_t attr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstacksize(&attr, &size);
        pthread_attr_destroy(&attr);
    }
    atomic_store(&stack_seen, (long)size);
    pthread_getname_np(pthread_self(), name_seen, sizeof name_seen);
    atomic_fetch_add(&done, 1);
}

#define SEQUENTIAL 50

Test(work_threads, sequential_work_starts_one_thread)
{
    for (int i = 0; i < SEQUENTIAL; i++) {
        cr_assert_eq(vf_work_threads_run(count_one, NULL), 0);
        /* The next piece comes once the thread is back waiting, as a lookup
         * whose client waits for its answer does (mostly). */
        cr_assert_geq(settle(1, 0, false, 2000).idle, 1, "piece %d: no thread came back to wait", i);
    }
    cr_assert_eq(atomic_load(&done), SEQUENTIAL);
    cr_assert_eq(counts().started, 1, "%lu threads started for %d pieces one after another", counts().started,
                 SEQUENTIAL);
}

Test(work_threads, work_at_once_gets_a_thread_each_with_the_lookup_stack)
{
    /* The name a work thread would otherwise inherit from its starter. */
    pthread_setname_np(pthread_self(), "MHD-listen");
    cr_assert_eq(vf_work_threads_run(note_stack, NULL), 0);
    settle(1, 0, false, 2000);
    cr_assert_geq(atomic_load(&stack_seen), VF_WORK_STACK, "stack %ld < %d", atomic_load(&stack_seen), VF_WORK_STACK);
    cr_assert_str_eq(name_seen, VF_WORK_THREAD_NAME, "a work thread runs as \"%s\"", name_seen);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(vf_work_threads_run(held_until_open, NULL), 0);
    pause_ms(20);
    vf_work_threads_stats s = counts();
    cr_assert_eq(s.live, 8, "%u threads for 8 pieces held at once", s.live);
    cr_assert_eq(s.started, 8, "the idle thread took one piece, 7 were started: %lu", s.started);
    atomic_store(&gate_open, true);
    s = settle(8, 8, true, 2000);
    cr_assert_eq(s.idle, 8);
    cr_assert_eq(atomic_load(&done), 9);
}

Test(work_threads, at_most_idle_max_wait_and_they_end_after_the_idle_time)
{
    vf_work_threads_tune(2, 300);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(vf_work_threads_run(held_until_open, NULL), 0);
    pause_ms(20);
    cr_assert_eq(counts().live, 6);
    atomic_store(&gate_open, true);
    vf_work_threads_stats s = settle(2, 2, true, 2000);
    cr_assert_eq(s.live, 2, "%u threads left after the work, limit 2 idle", s.live);
    cr_assert_eq(s.idle, 2);
    s = settle(0, 0, true, 3000);
    cr_assert_eq(s.live, 0, "%u idle threads still there after 3 s, idle time 300 ms", s.live);
    cr_assert_eq(vf_work_threads_run(count_one, NULL), 0, "a new thread starts after they ended");
    settle(1, 0, false, 2000);
    cr_assert_eq(atomic_load(&done), 7);
    cr_assert_eq(counts().started, 7);
}
