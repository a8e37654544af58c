/* Usage of a running broker (descriptors and descendants, read through
 * tests/support/proc_inspect) and waits for it to settle. */
#include "hostile.h"

#include <errno.h>
#include <time.h>

hh_usage hh_usage_of(pid_t pid)
{
    hh_usage u = { .fds = pi_fd_count(pid), .procs = pi_descendants(pid, NULL, 0) };
    return u;
}

static void pause_ms(long ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

hh_usage hh_usage_settle(pid_t pid, hh_usage base, unsigned timeout_ms)
{
    double deadline = hx_now_ms() + timeout_ms;
    for (;;) {
        hh_usage u = hh_usage_of(pid);
        if ((u.fds <= base.fds && u.procs <= base.procs) || hx_now_ms() >= deadline)
            return u;
        pause_ms(20);
    }
}

hh_usage hh_usage_steady(pid_t pid, unsigned timeout_ms)
{
    double deadline = hx_now_ms() + timeout_ms;
    hh_usage last = hh_usage_of(pid);
    double since = hx_now_ms();
    for (;;) {
        pause_ms(25);
        hh_usage u = hh_usage_of(pid);
        double now = hx_now_ms();
        if (u.fds != last.fds || u.procs != last.procs) {
            last = u;
            since = now;
        } else if (now - since >= 250 || now >= deadline) {
            return u;
        }
        if (now >= deadline)
            return u;
    }
}
