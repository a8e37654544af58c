#include "broker/spawn/turn_line.h"

#include <time.h>

void vf_turn_join(vf_turn_line *l, vf_turn *t)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->wake, &ca);
    pthread_condattr_destroy(&ca);
    t->next = NULL;
    pthread_mutex_lock(&l->lock);
    if (l->tail)
        l->tail->next = t;
    else
        l->head = t;
    l->tail = t;
    l->waiting++;
    pthread_mutex_unlock(&l->lock);
}

bool vf_turn_wait(vf_turn_line *l, vf_turn *t, int max_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += max_ms / 1000;
    until.tv_nsec += (long)(max_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&l->lock);
    /* Spurious wake-ups and the head's signal look alike: the head is checked. */
    while (l->head != t && pthread_cond_timedwait(&t->wake, &l->lock, &until) == 0)
        ;
    bool mine = l->head == t;
    pthread_mutex_unlock(&l->lock);
    return mine;
}

void vf_turn_leave(vf_turn_line *l, vf_turn *t)
{
    pthread_mutex_lock(&l->lock);
    vf_turn **p = &l->head, *prev = NULL;
    while (*p && *p != t) {
        prev = *p;
        p = &(*p)->next;
    }
    if (*p) {
        bool was_head = l->head == t;
        *p = t->next;
        if (l->tail == t)
            l->tail = prev;
        l->waiting--;
        if (was_head && l->head)
            pthread_cond_signal(&l->head->wake);
    }
    pthread_mutex_unlock(&l->lock);
    pthread_cond_destroy(&t->wake);
}

unsigned vf_turn_waiting(vf_turn_line *l)
{
    pthread_mutex_lock(&l->lock);
    unsigned n = l->waiting;
    pthread_mutex_unlock(&l->lock);
    return n;
}
