/* Cancellation token: an atomic flag plus a self-pipe for waking poll(). */
#include "broker/lookup/cancel.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int vf_cancel_init(vf_cancel *c)
{
    int fds[2];
    atomic_init(&c->fired, false);
    c->read_fd = c->write_fd = -1;
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    c->read_fd = fds[0];
    c->write_fd = fds[1];
    return 0;
}

void vf_cancel_fire(vf_cancel *c)
{
    if (!c || atomic_exchange(&c->fired, true))
        return;
    if (c->write_fd >= 0) {
        ssize_t w;
        do
            w = write(c->write_fd, "x", 1);
        while (w < 0 && errno == EINTR);
    }
}

bool vf_cancel_fired(const vf_cancel *c)
{
    return c && atomic_load(&c->fired);
}

int vf_cancel_fd(const vf_cancel *c)
{
    return c ? c->read_fd : -1;
}

void vf_cancel_destroy(vf_cancel *c)
{
    if (c->read_fd >= 0)
        close(c->read_fd);
    if (c->write_fd >= 0)
        close(c->write_fd);
    c->read_fd = c->write_fd = -1;
}
