#include "broker/spawn/cancel_wait.h"

#include <errno.h>
#include <poll.h>

#include "ipc/ipc_frame.h"

bool vf_cancel_fd_fired(int cancel_fd)
{
    if (cancel_fd < 0)
        return false;
    struct pollfd p = { .fd = cancel_fd, .events = POLLIN };
    return poll(&p, 1, 0) > 0;
}

vf_wait_rc vf_wait_fd(int fd, short events, int cancel_fd, int64_t deadline_ms)
{
    struct pollfd p[2] = { { .fd = fd, .events = events }, { .fd = cancel_fd, .events = POLLIN } };
    for (;;) {
        int64_t left = deadline_ms - vf_now_ms();
        if (left < 0)
            left = 0;
        int r = poll(p, 2, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno != EINTR)
            return VF_WAIT_TIMEOUT;
        if (r > 0 && p[1].revents)
            return VF_WAIT_CANCELLED;
        if (r > 0 && p[0].revents)
            return VF_WAIT_READY;
        if (r == 0 && left == 0)
            return VF_WAIT_TIMEOUT;
    }
}
