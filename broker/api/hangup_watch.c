#include "broker/api/hangup_watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct entry {
    struct entry *next;
    uint64_t id;
    int fd;
    vf_cancel *token;
} entry;

struct vf_hangup_watch {
    pthread_mutex_t lock;
    int epfd, stopfd;
    pthread_t thread;
    uint64_t next_id;
    entry *entries;
    unsigned n;
};

/* Caller holds the lock. Unlinks and returns the entry, or NULL. */
static entry *take(vf_hangup_watch *w, uint64_t id)
{
    for (entry **p = &w->entries; *p; p = &(*p)->next) {
        if ((*p)->id != id)
            continue;
        entry *e = *p;
        *p = e->next;
        w->n--;
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, e->fd, NULL);
        return e;
    }
    return NULL;
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
            entry *e = take(w, ev[i].data.u64);
            if (e) {
                vf_cancel_fire(e->token);
                free(e);
            }
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
    w->next_id = 1;
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
    while (w->entries) {
        entry *e = w->entries;
        w->entries = e->next;
        free(e);
    }
    close(w->epfd);
    close(w->stopfd);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

uint64_t vf_hangup_watch_add(vf_hangup_watch *w, int fd, vf_cancel *token)
{
    entry *e = w && fd >= 0 && token ? calloc(1, sizeof *e) : NULL;
    if (!e)
        return 0;
    pthread_mutex_lock(&w->lock);
    e->id = w->next_id++;
    e->fd = fd;
    e->token = token;
    /* Only hang-up conditions: a pipelined next request (EPOLLIN) is not one. */
    struct epoll_event ev = { .events = EPOLLRDHUP, .data.u64 = e->id };
    uint64_t id = e->id;
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) == 0) {
        e->next = w->entries;
        w->entries = e;
        w->n++;
    } else {
        free(e);
        id = 0;
    }
    pthread_mutex_unlock(&w->lock);
    return id;
}

bool vf_hangup_watch_remove(vf_hangup_watch *w, uint64_t id)
{
    if (!w || !id)
        return false;
    pthread_mutex_lock(&w->lock);
    entry *e = take(w, id);
    pthread_mutex_unlock(&w->lock);
    bool gone = e == NULL;   /* the watcher took it: the peer hung up */
    free(e);
    return gone;
}

void vf_hangup_watch_fire_all(vf_hangup_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    for (entry *e = w->entries; e; e = e->next)
        vf_cancel_fire(e->token);
    pthread_mutex_unlock(&w->lock);
}

unsigned vf_hangup_watch_count(vf_hangup_watch *w)
{
    pthread_mutex_lock(&w->lock);
    unsigned n = w->n;
    pthread_mutex_unlock(&w->lock);
    return n;
}
