#include "broker/api/drain_refuser.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_LISTEN 4
#define MAX_OPEN 256     /* answered, waiting for the client to read and close */
#define LINGER_MS 1000

static const char answer[] =
    "HTTP/1.1 503 Service Unavailable\r\n"
    "Content-Type: application/json\r\n"
    "Retry-After: 1\r\n"
    "Connection: close\r\n"
    "Content-Length: 78\r\n"
    "\r\n"
    "{\"error\":{\"field\":\"\",\"message\":\"verifetchd is shutting down\",\"retry_after\":1}}";

struct vf_drain_refuser {
    pthread_t thread;
    int stopfd;
    int listen[MAX_LISTEN];
    unsigned n_listen;
};

typedef struct {
    int fd;
    long long until_ms;
} answered;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Answer at once (the request is not needed to say "come back later"), then
 * read until the client closes so that unread request bytes cause no reset. */
static void answer_one(int fd, answered *open, unsigned *n_open)
{
    ssize_t w = send(fd, answer, sizeof answer - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
    shutdown(fd, SHUT_WR);
    if (*n_open == MAX_OPEN) {
        close(fd);
        return;
    }
    open[(*n_open)++] = (answered){ .fd = fd, .until_ms = now_ms() + LINGER_MS };
}

static void *refuse_loop(void *arg)
{
    vf_drain_refuser *r = arg;
    answered open[MAX_OPEN];
    unsigned n_open = 0;
    for (;;) {
        struct pollfd p[1 + MAX_LISTEN + MAX_OPEN];
        unsigned n = 0;
        p[n++] = (struct pollfd){ .fd = r->stopfd, .events = POLLIN };
        for (unsigned i = 0; i < r->n_listen; i++)
            p[n++] = (struct pollfd){ .fd = r->listen[i], .events = POLLIN };
        for (unsigned i = 0; i < n_open; i++)
            p[n++] = (struct pollfd){ .fd = open[i].fd, .events = POLLIN };
        if (poll(p, n, 100) < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            break;
        for (unsigned i = 0; i < r->n_listen; i++) {
            if (!p[1 + i].revents)
                continue;
            int fd;
            while ((fd = accept4(r->listen[i], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
                answer_one(fd, open, &n_open);
        }
        long long now = now_ms();
        unsigned kept = 0;
        for (unsigned i = 0; i < n_open; i++) {
            char sink[4096];
            bool done = now >= open[i].until_ms;
            if (!done && p[1 + r->n_listen + i].revents) {
                ssize_t got = recv(open[i].fd, sink, sizeof sink, MSG_DONTWAIT);
                done = got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR);
            }
            if (done)
                close(open[i].fd);
            else
                open[kept++] = open[i];
        }
        n_open = kept;
    }
    for (unsigned i = 0; i < n_open; i++)
        close(open[i].fd);
    return NULL;
}

vf_drain_refuser *vf_drain_refuser_start(const int *fds, unsigned n)
{
    vf_drain_refuser *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    for (unsigned i = 0; i < n && r->n_listen < MAX_LISTEN; i++) {
        if (fds[i] < 0)
            continue;
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
        r->listen[r->n_listen++] = fds[i];
    }
    r->stopfd = eventfd(0, EFD_CLOEXEC);
    if (r->stopfd < 0 || pthread_create(&r->thread, NULL, refuse_loop, r) != 0) {
        if (r->stopfd >= 0)
            close(r->stopfd);
        free(r);
        return NULL;
    }
    return r;
}

void vf_drain_refuser_stop(vf_drain_refuser *r)
{
    if (!r)
        return;
    uint64_t one = 1;
    if (write(r->stopfd, &one, sizeof one) == (ssize_t)sizeof one)
        pthread_join(r->thread, NULL);
    close(r->stopfd);
    free(r);
}
