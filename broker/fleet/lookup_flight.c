#include "broker/fleet/lookup_flight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Caller holds flights_lock. */
static vf_flight *flight_find_locked(vf_fleet *f, const char *key)
{
    vf_flight *fl = f->flights;
    while (fl && strcmp(fl->key, key) != 0)
        fl = fl->next;
    return fl;
}

/* Caller holds flights_lock. NULL on OOM (the caller then leads unregistered). */
static vf_flight *flight_new_locked(vf_fleet *f, const char *key)
{
    vf_flight *fl = calloc(1, sizeof *fl);
    if (!fl)
        return NULL;
    snprintf(fl->key, sizeof fl->key, "%s", key);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&fl->done, &attr);
    pthread_condattr_destroy(&attr);
    fl->next = f->flights;
    f->flights = fl;
    return fl;
}

vf_flight *vf_flight_lead(vf_fleet *f, const char *key)
{
    pthread_mutex_lock(&f->flights_lock);
    vf_flight *led = flight_find_locked(f, key) ? NULL : flight_new_locked(f, key);
    pthread_mutex_unlock(&f->flights_lock);
    return led;
}

vf_flight *vf_flight_join(vf_fleet *f, const char *key, uint64_t budget_ms, vf_flight **led)
{
    *led = NULL;
    pthread_mutex_lock(&f->flights_lock);
    vf_flight *fl = flight_find_locked(f, key);
    if (!fl) {
        *led = flight_new_locked(f, key);
        pthread_mutex_unlock(&f->flights_lock);
        return NULL;
    }
    fl->waiters++;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)(budget_ms / 1000);
    until.tv_nsec += (long)(budget_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (!fl->finished && pthread_cond_timedwait(&fl->done, &f->flights_lock, &until) == 0) {
    }
    pthread_mutex_unlock(&f->flights_lock);
    return fl;
}

static void flight_free_locked(vf_fleet *f, vf_flight *fl)
{
    vf_flight **pp = &f->flights;
    while (*pp && *pp != fl)
        pp = &(*pp)->next;
    if (*pp)
        *pp = fl->next;
    pthread_cond_destroy(&fl->done);
    free(fl);
}

void vf_flight_leave(vf_fleet *f, vf_flight *fl)
{
    pthread_mutex_lock(&f->flights_lock);
    fl->waiters--;
    if (fl->finished && fl->waiters == 0)
        flight_free_locked(f, fl);
    pthread_mutex_unlock(&f->flights_lock);
}

void vf_flight_finish(vf_fleet *f, vf_flight *fl)
{
    if (!fl)
        return;
    pthread_mutex_lock(&f->flights_lock);
    fl->finished = true;
    /* Unlinked now so a later identical lookup starts a new flight. */
    vf_flight **pp = &f->flights;
    while (*pp && *pp != fl)
        pp = &(*pp)->next;
    if (*pp)
        *pp = fl->next;
    fl->next = NULL;
    pthread_cond_broadcast(&fl->done);
    bool free_now = fl->waiters == 0;
    pthread_mutex_unlock(&f->flights_lock);
    if (free_now) {
        pthread_cond_destroy(&fl->done);
        free(fl);
    }
}
