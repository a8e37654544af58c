#include "broker/api/work_threads.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    vf_work_fn fn;
    void *arg;
} job;

/* An idle thread, on its own stack while it waits: handing it work wakes it
 * alone. Newest first, so the threads that stay busy are the ones reused and
 * the rest time out. A semaphore, posted after the lock is let go: a
 * condition variable signalled under the lock woke the thread only for it to
 * block on that lock (five futex calls per hand-off instead of two). */
typedef struct waiter {
    struct waiter *next;
    sem_t given;
    job work;   /* written under the lock before the post */
} waiter;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static waiter *idle_top;
static unsigned n_idle, n_live, idle_max = VF_WORK_IDLE_MAX, idle_ms = VF_WORK_IDLE_MS;
static unsigned long n_started;

static void deadline_in(struct timespec *ts, unsigned ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void unlink_waiter(waiter *w)
{
    for (waiter **p = &idle_top; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            n_idle--;
            return;
        }
}

/* Caller holds the lock; returns with it held. false = this thread is to end. */
static bool next_job(job *out)
{
    if (n_idle >= idle_max)
        return false;
    waiter w = { .next = idle_top };
    sem_init(&w.given, 0, 0);
    idle_top = &w;
    n_idle++;
    struct timespec until;
    deadline_in(&until, idle_ms);
    pthread_mutex_unlock(&lock);
    while (sem_clockwait(&w.given, CLOCK_MONOTONIC, &until) != 0) {
        if (errno != ETIMEDOUT)
            continue;   /* EINTR */
        pthread_mutex_lock(&lock);
        if (!w.work.fn) {   /* no work came: this thread ends */
            unlink_waiter(&w);
            sem_destroy(&w.given);
            *out = w.work;
            return false;
        }
        pthread_mutex_unlock(&lock);   /* given just as the wait ran out: its post is on the way */
        while (sem_wait(&w.given) != 0)
            ;
        break;
    }
    pthread_mutex_lock(&lock);
    sem_destroy(&w.given);   /* sem_post touches nothing that matters once it has woken us */
    *out = w.work;
    return true;
}

static void *thread_main(void *arg)
{
    job j = *(job *)arg;
    free(arg);
    /* Not the name of the server thread that started it (a thread inherits
     * it): in top -H, gdb or /proc an operator can tell lookups from the
     * threads that accept and answer connections. */
    pthread_setname_np(pthread_self(), VF_WORK_THREAD_NAME);
    for (;;) {
        j.fn(j.arg);
        pthread_mutex_lock(&lock);
        bool more = next_job(&j);
        if (!more)
            n_live--;
        pthread_mutex_unlock(&lock);
        if (!more)
            return NULL;
    }
}

static int start_thread(vf_work_fn fn, void *arg)
{
    job *first = malloc(sizeof *first);
    if (!first)
        return -1;
    *first = (job){ fn, arg };
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, VF_WORK_STACK);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_mutex_lock(&lock);
    n_live++;
    n_started++;
    pthread_mutex_unlock(&lock);
    int rc = pthread_create(&t, &attr, thread_main, first);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        pthread_mutex_lock(&lock);
        n_live--;
        n_started--;
        pthread_mutex_unlock(&lock);
        free(first);
        return -1;
    }
    return 0;
}

int vf_work_threads_run(vf_work_fn fn, void *arg)
{
    pthread_mutex_lock(&lock);
    waiter *w = idle_top;
    if (w) {
        idle_top = w->next;
        n_idle--;
        w->work = (job){ fn, arg };
    }
    pthread_mutex_unlock(&lock);
    if (!w)
        return start_thread(fn, arg);
    sem_post(&w->given);
    return 0;
}

void vf_work_threads_counts(vf_work_threads_stats *out)
{
    pthread_mutex_lock(&lock);
    *out = (vf_work_threads_stats){ .started = n_started, .live = n_live, .idle = n_idle };
    pthread_mutex_unlock(&lock);
}

void vf_work_threads_tune(unsigned max, unsigned ms)
{
    pthread_mutex_lock(&lock);
    idle_max = max ? max : VF_WORK_IDLE_MAX;
    idle_ms = ms ? ms : VF_WORK_IDLE_MS;   /* threads already waiting keep their deadline */
    pthread_mutex_unlock(&lock);
}
