/* Cancellation token: an atomic flag plus an eventfd for waking poll(): one
 * descriptor per lookup (a pipe took two, and a close more per request). */
#include "broker/lookup/cancel.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

int vf_cancel_init(vf_cancel *c)
{
    atomic_init(&c->fired, false);
    c->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return c->fd >= 0 ? 0 : -1;
}

void vf_cancel_fire(vf_cancel *c)
{
    if (!c || atomic_exchange(&c->fired, true))
        return;
    if (c->fd >= 0) {
        ssize_t w;
        do
            w = write(c->fd, &(uint64_t){ 1 }, sizeof(uint64_t));
        while (w < 0 && errno == EINTR);
    }
}

bool vf_cancel_fired(const vf_cancel *c)
{
    return c && atomic_load(&c->fired);
}

int vf_cancel_fd(const vf_cancel *c)
{
    return c ? c->fd : -1;
}

void vf_cancel_destroy(vf_cancel *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}
