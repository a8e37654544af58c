/* The workers a zygote forked ahead of time: taking one (lookups wait in one
 * first-come, first-served line), claiming it, learning how it ended. */
#include "broker/spawn/zygote_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/local_cause.h"
#include "broker/log_limit.h"
#include "broker/spawn/turn_line.h"
#include "broker/spawn/zygote_internal.h"
#include "ipc/ipc_fds.h"
#include "ipc/ipc_frame.h"
#include "ipc/ipc_messages.h"

static void close_worker(vf_zygote_worker *w)
{
    if (w->ipc >= 0)
        close(w->ipc);
    if (w->pidfd >= 0)
        close(w->pidfd);
    if (w->status >= 0)
        close(w->status);
    *w = (vf_zygote_worker){ .pid = -1, .ipc = -1, .pidfd = -1, .status = -1 };
}

/* Exited while waiting (its zygote died, say): not worth handing a job. */
static bool still_alive(const vf_zygote_worker *w)
{
    struct pollfd p = { .fd = w->pidfd, .events = POLLIN };
    return poll(&p, 1, 0) == 0;
}

/* One announced worker off the control socket. READY messages stay queued
 * there, descriptors in flight, until a lookup takes one: the broker holds no
 * idle worker's descriptors, and threads need no lock (each recvmsg gets a
 * whole message of its own). 1: got one; 0: none queued; -1: zygote gone. */
static int next_ready(int ctl, vf_zygote_worker *w)
{
    for (;;) {
        vf_zy_msg m;
        int fds[3] = { -1, -1, -1 };
        char cbuf[CMSG_SPACE(4 * sizeof(int))];
        struct iovec iov = { &m, sizeof m };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                             .msg_controllen = sizeof cbuf };
        ssize_t n = recvmsg(ctl, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        if (n == 0)
            return -1;
        size_t n_fds = vf_ipc_take_fds(&mh, fds, 3);
        *w = (vf_zygote_worker){ .pid = m.pid, .ipc = fds[0], .pidfd = fds[1], .status = fds[2] };
        if (vf_zy_msg_is(&m, n, VF_ZY_READY) && m.pid > 0 && n_fds == 3 &&
            !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && still_alive(w))
            return 1;
        if (vf_zy_msg_is(&m, n, VF_ZY_REFUSED) && vf_log_limit_take("zygote_refused")) {
            m.detail[sizeof m.detail - 1] = '\0';
            fprintf(stderr, "verifetchd: %s\n", m.detail);
        }
        close_worker(w); /* dead, malformed or not a READY: next one */
    }
}

/* A READY message brings the worker's three descriptors; with no room for
 * them the kernel would drop them (MSG_CTRUNC) and the worker with them. So
 * room is checked first, and a broker out of descriptors leaves it queued. */
static bool room_for_a_worker(int ctl, int *err)
{
    int spare[3];
    size_t n = 0;
    for (; n < 3; n++)
        if ((spare[n] = fcntl(ctl, F_DUPFD_CLOEXEC, 0)) < 0)
            break;
    *err = n < 3 ? errno : 0;
    while (n > 0)
        close(spare[--n]);
    return *err == 0;
}

/* Tells the zygote to fork a replacement and until when this worker may run:
 * then the zygote kills it even if we have long moved on. */
void vf_zygote_claim(vf_zygote_worker *w, int64_t kill_at_ms)
{
    int64_t left = kill_at_ms - vf_now_ms();
    vf_zy_msg m = { .magic = VF_ZY_MAGIC, .op = VF_ZY_CLAIMED, .pid = w->pid,
                    .kill_after_ms = (uint32_t)(left < 1 ? 1 : left > 86400000 ? 86400000 : left) };
    send(w->status, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The zygote process has not ended (its pidfd is not readable). */
static bool gen_alive(const zy_gen *g)
{
    struct pollfd p = { .fd = g->pidfd, .events = POLLIN };
    return g->pidfd < 0 || poll(&p, 1, 0) == 0;
}

/* Lookups waiting for a worker stand in this line; only its head reads the
 * control socket. Before it, every waiter polled the socket and whichever
 * thread the scheduler ran first took the next worker: a lookup could lose
 * that race many times over (ramp at 64 clients: p99 7.7 x p50). */
static vf_turn_line line = VF_TURN_LINE_INIT;
static atomic_uint handed_out;   /* numbers the workers given out (vf_zygote_worker.seq) */

/* This lookup, waiting since began, takes an exec'd worker instead: the
 * zygote has announced none for VF_ZYGOTE_OVERFLOW_MS (stopped, hung), or
 * the lookup has waited the most it may. The zygote keeps serving the rest. */
static bool exec_due(int64_t began, int64_t now)
{
    return now >= began + VF_ZYGOTE_OVERFLOW_MAX_MS ||
           (now >= began + VF_ZYGOTE_OVERFLOW_MS && now - vf_zy_last_ready_ms() >= VF_ZYGOTE_OVERFLOW_MS);
}

/* The soonest exec_due(began, ...) can become true, while the zygote
 * announces nothing from now on: a waiter in line sleeps until then. */
static int64_t exec_check_at(int64_t began)
{
    int64_t quiet_end = vf_zy_last_ready_ms() + VF_ZYGOTE_OVERFLOW_MS;
    int64_t at = began + VF_ZYGOTE_OVERFLOW_MS > quiet_end ? began + VF_ZYGOTE_OVERFLOW_MS : quiet_end;
    return at < began + VF_ZYGOTE_OVERFLOW_MAX_MS ? at : began + VF_ZYGOTE_OVERFLOW_MAX_MS;
}

/* VF_ZYGOTE_SPAWNED: this lookup's turn has come (it is the head);
 * otherwise why it leaves the line before its turn. */
static vf_zygote_spawn_rc wait_turn(vf_turn *me, int64_t began, int64_t deadline_ms, int cancel_fd, char *detail,
                                    size_t detail_len)
{
    for (;;) {
        int64_t until = exec_check_at(began);
        vf_turn_rc tr = vf_turn_wait(&line, me, cancel_fd, until < deadline_ms ? until : deadline_ms);
        if (tr == VF_TURN_MINE)
            return VF_ZYGOTE_SPAWNED;
        if (tr == VF_TURN_CANCELLED) {
            snprintf(detail, detail_len, "cancelled while waiting for a worker");
            return VF_ZYGOTE_REFUSED;
        }
        if (exec_due(began, vf_now_ms()))
            return VF_ZYGOTE_UNAVAILABLE;
        if (vf_zy_left_ms(deadline_ms) == 0) {
            snprintf(detail, detail_len, "no worker ready before the deadline");
            return VF_ZYGOTE_REFUSED;
        }
    }
}

/* The head of the line reads announced workers off the control socket. */
static vf_zygote_spawn_rc take_at_head(int64_t began, int64_t deadline_ms, int cancel_fd, vf_zygote_worker *w,
                                       char *detail, size_t detail_len)
{
    zy_gen *g = vf_zy_gen_acquire();
    if (!g)
        return VF_ZYGOTE_UNAVAILABLE;
    bool waiting = false;
    vf_zygote_spawn_rc rc = VF_ZYGOTE_UNAVAILABLE;
    for (;;) {
        if (atomic_load(&g->retired)) {
            /* A fresh zygote took over while we waited: wait on it instead. */
            vf_zy_gen_release(g);
            if (!(g = vf_zy_gen_acquire()))
                return VF_ZYGOTE_UNAVAILABLE;
            continue;
        }
        int err = 0;
        if (!room_for_a_worker(g->ctl, &err) && vf_local_exhaustion(err)) {
            vf_local_detail(detail, detail_len, err, false, "cannot take a worker from the zygote");
            rc = VF_ZYGOTE_LOCAL;
            break;
        }
        /* -1: closed under us or dead; the supervisor replaces it, we fall back. */
        int got = atomic_load(&g->failed) ? -1 : next_ready(g->ctl, w);
        if (got > 0 && !gen_alive(g)) {
            /* Taken off the queue of a zygote that has just died: its workers
             * die with it (PDEATHSIG), so no job goes to this one. */
            close_worker(w);
            got = -1;
        }
        if (got < 0 && atomic_load(&g->retired))
            continue;
        if (got < 0) {
            atomic_store(&g->failed, true);
            vf_zy_kick();
            break;
        }
        if (got > 0) {
            vf_zy_note_ready();
            atomic_fetch_add(&g->taken, 1);
            w->seq = atomic_fetch_add(&handed_out, 1);
            rc = VF_ZYGOTE_SPAWNED;
            break;
        }
        int64_t left = vf_zy_left_ms(deadline_ms);
        if (exec_due(began, vf_now_ms())) {
            rc = VF_ZYGOTE_UNAVAILABLE;
            break;
        }
        if (left == 0) {
            snprintf(detail, detail_len, "no worker ready before the deadline");
            rc = VF_ZYGOTE_REFUSED;
            break;
        }
        if (!waiting) {
            waiting = true;
            vf_zy_note_waiting();
        }
        /* The zygote forks the next worker as soon as it sees a claim. */
        struct pollfd p[2] = { { .fd = g->ctl, .events = POLLIN }, { .fd = cancel_fd, .events = POLLIN } };
        if (poll(p, 2, left > 50 ? 50 : (int)left) > 0 && p[1].revents) {
            snprintf(detail, detail_len, "cancelled while waiting for a worker");
            rc = VF_ZYGOTE_REFUSED;
            break;
        }
    }
    vf_zy_gen_release(g);
    return rc;
}

vf_zygote_spawn_rc vf_zygote_take(int64_t deadline_ms, int cancel_fd, vf_zygote_worker *w,
                                  char *detail, size_t detail_len)
{
    vf_zygote_spawn_rc rc = vf_zygote_take_unclaimed(deadline_ms, cancel_fd, w, detail, detail_len);
    if (rc == VF_ZYGOTE_SPAWNED)
        vf_zygote_claim(w, deadline_ms);
    return rc;
}

vf_zygote_spawn_rc vf_zygote_take_unclaimed(int64_t deadline_ms, int cancel_fd, vf_zygote_worker *w,
                                            char *detail, size_t detail_len)
{
    *w = (vf_zygote_worker){ .pid = -1, .ipc = -1, .pidfd = -1, .status = -1 };
    const int64_t began = vf_now_ms();
    vf_turn me;
    vf_turn_join(&line, &me);
    vf_zygote_spawn_rc rc = wait_turn(&me, began, deadline_ms, cancel_fd, detail, detail_len);
    if (rc == VF_ZYGOTE_SPAWNED)
        rc = take_at_head(began, deadline_ms, cancel_fd, w, detail, detail_len);
    vf_turn_leave(&line, &me);   /* the next in line reads the socket now */
    return rc;
}

unsigned vf_zygote_waiters(void)
{
    return vf_turn_waiting(&line);
}

int vf_zygote_wait(vf_zygote_worker *w, int64_t deadline_ms, int *wstatus, int *killed)
{
    *killed = 0;
    *wstatus = 0;
    for (int phase = 0; phase < 2; phase++) {
        vf_zy_msg m;
        ssize_t n = vf_zy_recv_msg(w->status, &m, sizeof m, NULL, deadline_ms);
        if (vf_zy_msg_is(&m, n, VF_ZY_EXITED)) {
            *wstatus = m.wstatus;
            /* The zygote's own kill at the claimed deadline can land just
             * before ours would: it is the same kill, made on our behalf. */
            if (m.killed_at_deadline)
                *killed = 1;
            return 0;
        }
        if (n >= 0 || vf_now_ms() < deadline_ms)
            return -1; /* EOF, reset or nonsense before the deadline: the zygote is gone */
        if (phase == 0) {
            pidfd_send_signal(w->pidfd, SIGKILL, NULL, 0);
            *killed = 1;
            deadline_ms = vf_now_ms() + KILL_WAIT_MS;
        }
    }
    return -1;
}

void vf_zygote_release(vf_zygote_worker *w)
{
    close_worker(w);
}

