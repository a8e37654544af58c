#include "broker/spawn/turn_line.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "broker/spawn/cancel_wait.h"
#include "ipc/ipc_frame.h"

/* Without an eventfd a waiter re-checks its cancel fd this often. */
#define FALLBACK_CHECK_MS 20

void vf_turn_join(vf_turn_line *l, vf_turn *t)
{
    t->wake_fd = -1;   /* made when it has to wait: the head at once costs no descriptor */
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

static bool is_head(vf_turn_line *l, vf_turn *t)
{
    pthread_mutex_lock(&l->lock);
    bool mine = l->head == t;
    pthread_mutex_unlock(&l->lock);
    return mine;
}

static struct timespec monotonic_in(int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* No eventfd: short timed waits, checking the cancel fd between them. */
static vf_turn_rc wait_polling(vf_turn_line *l, vf_turn *t, int cancel_fd, int64_t until_ms)
{
    for (;;) {
        if (is_head(l, t))
            return VF_TURN_MINE;
        if (vf_cancel_fd_fired(cancel_fd))
            return VF_TURN_CANCELLED;
        int64_t left = until_ms - vf_now_ms();
        if (left <= 0)
            return VF_TURN_TIMEOUT;
        struct timespec until = monotonic_in(left < FALLBACK_CHECK_MS ? left : FALLBACK_CHECK_MS);
        pthread_mutex_lock(&l->lock);
        if (l->head != t)
            pthread_cond_timedwait(&t->wake, &l->lock, &until);
        pthread_mutex_unlock(&l->lock);
    }
}

/* Gives t its eventfd, under the lock so that wake() sees either the fd or
 * nothing. False when t is the head by now, or no eventfd can be had. */
static bool arm(vf_turn_line *l, vf_turn *t)
{
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    pthread_mutex_lock(&l->lock);
    bool waits = l->head != t && fd >= 0;
    if (waits)
        t->wake_fd = fd;
    pthread_mutex_unlock(&l->lock);
    if (!waits && fd >= 0)
        close(fd);
    return waits;
}

vf_turn_rc vf_turn_wait(vf_turn_line *l, vf_turn *t, int cancel_fd, int64_t until_ms)
{
    if (t->wake_fd < 0 && is_head(l, t))
        return VF_TURN_MINE;   /* the usual case: no one ahead, no eventfd to make */
    if (t->wake_fd < 0 && !arm(l, t))
        return wait_polling(l, t, cancel_fd, until_ms);
    for (;;) {
        /* The turn wins over a cancellation or a deadline that came with it. */
        if (is_head(l, t))
            return VF_TURN_MINE;
        vf_wait_rc rc = vf_wait_fd(t->wake_fd, POLLIN, cancel_fd, until_ms);
        if (rc != VF_WAIT_READY)
            return is_head(l, t) ? VF_TURN_MINE : rc == VF_WAIT_CANCELLED ? VF_TURN_CANCELLED : VF_TURN_TIMEOUT;
        uint64_t n;
        ssize_t r = read(t->wake_fd, &n, sizeof n);
        (void)r;   /* EAGAIN: woken already drained; the head check decides */
    }
}

/* Under the lock: tell the new head its turn has come. */
static void wake(vf_turn *t)
{
    if (t->wake_fd >= 0) {
        ssize_t r = write(t->wake_fd, &(uint64_t){ 1 }, sizeof(uint64_t));
        (void)r;   /* cannot overflow: one count per turn */
    } else {
        pthread_cond_signal(&t->wake);
    }
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
            wake(l->head);
    }
    pthread_mutex_unlock(&l->lock);
    /* Unlinked: nobody writes to it any more (wake runs under the lock). */
    if (t->wake_fd >= 0)
        close(t->wake_fd);
    pthread_cond_destroy(&t->wake);
}

unsigned vf_turn_waiting(vf_turn_line *l)
{
    pthread_mutex_lock(&l->lock);
    unsigned n = l->waiting;
    pthread_mutex_unlock(&l->lock);
    return n;
}
