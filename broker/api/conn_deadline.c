#include "broker/api/conn_deadline.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "broker/api/lookup_log.h"
#include "ipc/ipc_frame.h"

struct vf_conn_deadlines {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    bool stopping;
    vf_conn *head;          /* every open connection */
    unsigned head_s, body_s;
    void (*tick)(void *);
    void *tick_arg;
};

static void set_deadline(vf_conn_deadlines *d, vf_conn *c, unsigned seconds, const char *phase)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->lock);
    c->deadline_ms = seconds ? vf_now_ms() + (int64_t)seconds * 1000 : 0;
    c->phase = phase;
    pthread_mutex_unlock(&d->lock);
}

void vf_conn_head_in(vf_conn_deadlines *d, vf_conn *c)
{
    set_deadline(d, c, d->body_s, "request body");
}

void vf_conn_request_in(vf_conn_deadlines *d, vf_conn *c)
{
    set_deadline(d, c, 0, NULL);
}

void vf_conn_answered(vf_conn_deadlines *d, vf_conn *c)
{
    set_deadline(d, c, d->head_s, "request head");
}

vf_conn *vf_conn_add(vf_conn_deadlines *d, int fd)
{
    vf_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    c->deadline_ms = vf_now_ms() + (int64_t)d->head_s * 1000;
    c->phase = "request head";
    pthread_mutex_lock(&d->lock);
    c->next = d->head;
    if (d->head)
        d->head->prev = c;
    d->head = c;
    pthread_mutex_unlock(&d->lock);
    return c;
}

void vf_conn_remove(vf_conn_deadlines *d, vf_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        d->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&d->lock);
    free(c);
}

/* Under d->lock: the fd is still the connection's (removal, which comes
 * before libmicrohttpd closes it, takes the same lock). Once per deadline. */
static unsigned shut_late(vf_conn_deadlines *d, int64_t now, const char **phase)
{
    unsigned n = 0;
    for (vf_conn *c = d->head; c; c = c->next) {
        if (!c->deadline_ms || now < c->deadline_ms)
            continue;
        shutdown(c->fd, SHUT_RDWR);
        *phase = c->phase;
        c->deadline_ms = 0;
        n++;
    }
    return n;
}

static void *watch(void *arg)
{
    vf_conn_deadlines *d = arg;
    pthread_mutex_lock(&d->lock);
    while (!d->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += VF_CONN_TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&d->wake, &d->lock, &until);
        const char *phase = NULL;
        unsigned late = d->stopping ? 0 : shut_late(d, vf_now_ms(), &phase);
        pthread_mutex_unlock(&d->lock);
        if (late) {
            char why[128];
            snprintf(why, sizeof why, "%u connection%s closed: %s not complete in time", late,
                     late == 1 ? "" : "s", phase);
            vf_request_log(stderr, "", "request_timeout", why);
        }
        if (d->tick)
            d->tick(d->tick_arg);
        pthread_mutex_lock(&d->lock);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

vf_conn_deadlines *vf_conn_deadlines_start(unsigned head_s, unsigned body_s, void (*tick)(void *), void *tick_arg)
{
    vf_conn_deadlines *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->wake, NULL);
    d->head_s = head_s;
    d->body_s = body_s;
    d->tick = tick;
    d->tick_arg = tick_arg;
    if (pthread_create(&d->thread, NULL, watch, d) != 0) {
        pthread_cond_destroy(&d->wake);
        pthread_mutex_destroy(&d->lock);
        free(d);
        return NULL;
    }
    return d;
}

void vf_conn_deadlines_stop(vf_conn_deadlines *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    d->stopping = true;
    pthread_cond_signal(&d->wake);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    while (d->head) {   /* the daemons are stopped: nothing closes these any more */
        vf_conn *c = d->head;
        d->head = c->next;
        free(c);
    }
    pthread_cond_destroy(&d->wake);
    pthread_mutex_destroy(&d->lock);
    free(d);
}
