#include "broker/api/hangup_watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* Watched sockets live in a table, found by index in O(1): a list was
 * walked under the lock the watcher also takes, once per lookup, past up to
 * every admitted lookup (~190 at 1,024 clients). An id is the slot's index
 * + 1 and its generation: a slot gets a new generation each time it is
 * freed, so an event or an unwatch for an earlier occupant matches nothing. */
typedef struct {
    uint32_t gen;
    int fd;              /* -1: free */
    unsigned next_free;  /* index + 1 of the next free slot, 0 = none */
    vf_cancel *token;
} slot;

struct vf_hangup_watch {
    pthread_mutex_t lock;
    int epfd, stopfd;
    pthread_t thread;
    slot *slots;
    unsigned cap, n;
    unsigned free_head;  /* index + 1, 0 = none */
};

static uint64_t id_of(const vf_hangup_watch *w, unsigned i)
{
    return (uint64_t)w->slots[i].gen << 32 | (uint64_t)(i + 1);
}

/* Caller holds the lock. Frees the id's slot and returns its token, or
 * NULL when the id is no longer watched. */
static vf_cancel *take(vf_hangup_watch *w, uint64_t id)
{
    uint32_t low = (uint32_t)id;
    if (low == 0 || low > w->cap)
        return NULL;
    slot *sl = &w->slots[low - 1];
    if (sl->fd < 0 || sl->gen != (uint32_t)(id >> 32))
        return NULL;
    epoll_ctl(w->epfd, EPOLL_CTL_DEL, sl->fd, NULL);
    vf_cancel *token = sl->token;
    sl->fd = -1;
    sl->token = NULL;
    sl->gen++;
    sl->next_free = w->free_head;
    w->free_head = low;
    w->n--;
    return token;
}

/* Caller holds the lock: the index of a free slot (grown when none), or -1. */
static long free_slot(vf_hangup_watch *w)
{
    if (!w->free_head) {
        unsigned cap = w->cap ? 2 * w->cap : 64;
        slot *grown = realloc(w->slots, cap * sizeof *grown);
        if (!grown)
            return -1;
        for (unsigned i = w->cap; i < cap; i++)
            grown[i] = (slot){ .gen = 1, .fd = -1, .next_free = i + 1 < cap ? i + 2 : w->free_head };
        w->free_head = w->cap + 1;
        w->slots = grown;
        w->cap = cap;
    }
    unsigned i = w->free_head - 1;
    w->free_head = w->slots[i].next_free;
    return i;
}

static void *watch_loop(void *arg)
{
    vf_hangup_watch *w = arg;
    for (;;) {
        struct epoll_event ev[32];
        int n = epoll_wait(w->epfd, ev, 32, -1);
        if (n < 0 && errno != EINTR)
            return NULL;
        for (int i = 0; i < n; i++) {
            if (ev[i].data.u64 == 0)
                return NULL;   /* the stop eventfd */
            pthread_mutex_lock(&w->lock);
            vf_cancel *token = take(w, ev[i].data.u64);
            if (token)
                vf_cancel_fire(token);
            pthread_mutex_unlock(&w->lock);
        }
    }
}

vf_hangup_watch *vf_hangup_watch_start(void)
{
    vf_hangup_watch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    pthread_mutex_init(&w->lock, NULL);
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->stopfd = eventfd(0, EFD_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    if (w->epfd < 0 || w->stopfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->stopfd, &ev) != 0 ||
        pthread_create(&w->thread, &attr, watch_loop, w) != 0) {
        pthread_attr_destroy(&attr);
        if (w->epfd >= 0)
            close(w->epfd);
        if (w->stopfd >= 0)
            close(w->stopfd);
        free(w);
        return NULL;
    }
    pthread_attr_destroy(&attr);
    return w;
}

void vf_hangup_watch_stop(vf_hangup_watch *w)
{
    if (!w)
        return;
    uint64_t one = 1;
    if (write(w->stopfd, &one, sizeof one) == (ssize_t)sizeof one)
        pthread_join(w->thread, NULL);
    free(w->slots);
    close(w->epfd);
    close(w->stopfd);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

uint64_t vf_hangup_watch_add(vf_hangup_watch *w, int fd, vf_cancel *token)
{
    if (!w || fd < 0 || !token)
        return 0;
    pthread_mutex_lock(&w->lock);
    uint64_t id = 0;
    long i = free_slot(w);
    if (i >= 0) {
        slot *sl = &w->slots[i];
        id = id_of(w, (unsigned)i);
        /* Only hang-up conditions: a pipelined next request (EPOLLIN) is not one. */
        struct epoll_event ev = { .events = EPOLLRDHUP, .data.u64 = id };
        if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) == 0) {
            sl->fd = fd;
            sl->token = token;
            w->n++;
        } else {   /* back on the free list, same generation: nothing saw this id */
            sl->next_free = w->free_head;
            w->free_head = (unsigned)i + 1;
            id = 0;
        }
    }
    pthread_mutex_unlock(&w->lock);
    return id;
}

bool vf_hangup_watch_remove(vf_hangup_watch *w, uint64_t id)
{
    if (!w || !id)
        return false;
    pthread_mutex_lock(&w->lock);
    bool gone = take(w, id) == NULL;   /* the watcher took it: the peer hung up */
    pthread_mutex_unlock(&w->lock);
    return gone;
}

void vf_hangup_watch_fire_all(vf_hangup_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    for (unsigned i = 0; i < w->cap; i++)
        if (w->slots[i].fd >= 0)
            vf_cancel_fire(w->slots[i].token);
    pthread_mutex_unlock(&w->lock);
}

unsigned vf_hangup_watch_count(vf_hangup_watch *w)
{
    pthread_mutex_lock(&w->lock);
    unsigned n = w->n;
    pthread_mutex_unlock(&w->lock);
    return n;
}
