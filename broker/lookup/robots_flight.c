#include "broker/lookup/robots_flight.h"

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipc/ipc_frame.h"

/* How often a waiter looks at its cancellation fd: a condition variable
 * cannot wait on an fd, and a cancelled waiter only needs to stop soon. */
#define WAIT_SLICE_MS 50

typedef struct flight {
    struct flight *next;
    char *origin;
    unsigned holders;    /* the leader and the waiters; the last one out frees it */
    bool landed;
    int status;
} flight;

struct vf_robots_flights {
    pthread_mutex_t lock;
    pthread_cond_t landed;
    flight *flying;      /* flights not landed yet, one per origin */
};

vf_robots_flights *vf_robots_flights_new(void)
{
    vf_robots_flights *f = calloc(1, sizeof *f);
    pthread_condattr_t attr;
    if (!f || pthread_condattr_init(&attr) != 0) {
        free(f);
        return NULL;
    }
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    bool ok = pthread_mutex_init(&f->lock, NULL) == 0;
    if (ok && pthread_cond_init(&f->landed, &attr) != 0) {
        pthread_mutex_destroy(&f->lock);
        ok = false;
    }
    pthread_condattr_destroy(&attr);
    if (!ok) {
        free(f);
        return NULL;
    }
    return f;
}

/* Called with no lookup running, so nothing is flying. */
void vf_robots_flights_free(vf_robots_flights *f)
{
    if (!f)
        return;
    pthread_cond_destroy(&f->landed);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

static flight **find(vf_robots_flights *f, const char *origin)
{
    flight **p = &f->flying;
    while (*p && strcmp((*p)->origin, origin) != 0)
        p = &(*p)->next;
    return p;
}

static void release(flight *fl)
{
    if (--fl->holders == 0) {
        free(fl->origin);
        free(fl);
    }
}

static bool cancelled(int cancel_fd)
{
    struct pollfd p = { .fd = cancel_fd, .events = POLLIN };
    return cancel_fd >= 0 && poll(&p, 1, 0) > 0;
}

bool vf_robots_flight_join(vf_robots_flights *f, const char *origin, int64_t deadline_ms, int cancel_fd,
                           int *status)
{
    pthread_mutex_lock(&f->lock);
    flight *fl = *find(f, origin);
    if (!fl) {
        fl = calloc(1, sizeof *fl);
        if (fl && !(fl->origin = strdup(origin))) {
            free(fl);
            fl = NULL;
        }
        if (fl) {
            fl->holders = 1;
            fl->next = f->flying;
            f->flying = fl;
        }
        pthread_mutex_unlock(&f->lock);
        return true;   /* out of memory: lead alone, as before single-flight */
    }
    fl->holders++;
    while (!fl->landed) {
        int64_t left = deadline_ms - vf_now_ms();
        if (left <= 0 || cancelled(cancel_fd))
            break;
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        int64_t ns = until.tv_nsec + (left < WAIT_SLICE_MS ? left : WAIT_SLICE_MS) * 1000000;
        until.tv_sec += ns / 1000000000;
        until.tv_nsec = ns % 1000000000;
        pthread_cond_timedwait(&f->landed, &f->lock, &until);
    }
    *status = fl->landed ? fl->status : VF_ROBOTS_FLIGHT_GAVE_UP;
    release(fl);
    pthread_mutex_unlock(&f->lock);
    return false;
}

void vf_robots_flight_land(vf_robots_flights *f, const char *origin, int status)
{
    pthread_mutex_lock(&f->lock);
    flight **p = find(f, origin);
    flight *fl = *p;
    if (fl) {
        *p = fl->next;   /* off the board: the next miss leads a new flight */
        fl->landed = true;
        fl->status = status;
        pthread_cond_broadcast(&f->landed);
        release(fl);
    }
    pthread_mutex_unlock(&f->lock);
}
