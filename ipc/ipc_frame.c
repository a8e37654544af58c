/* Length-prefixed frames over an AF_UNIX stream socket, with at most one fd
 * riding on the first byte. The receiving side is written for a hostile peer:
 * the length is checked against the caller's cap before any allocation, every
 * wait is bounded by the caller's deadline, and stray fds are never leaked. */
#include "ipc/ipc_frame.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ipc_fds.h"

#include "ipc/ipc_fds.h"

/* Room for a few fds so a peer sending several is seen (and refused) rather
 * than silently truncated by the kernel. */
#define VF_IPC_CMSG_FDS 8

const char *vf_ipc_strerror(vf_ipc_err err)
{
    switch (err) {
    case VF_IPC_OK: return "ok";
    case VF_IPC_ERR_IO: return "io_error";
    case VF_IPC_ERR_EOF: return "eof";
    case VF_IPC_ERR_TOO_LARGE: return "too_large";
    case VF_IPC_ERR_TIMEOUT: return "timeout";
    case VF_IPC_ERR_MSGPACK: return "bad_msgpack";
    case VF_IPC_ERR_TRAILING: return "trailing_bytes";
    case VF_IPC_ERR_TYPE: return "wrong_type";
    case VF_IPC_ERR_MISSING: return "missing_field";
    case VF_IPC_ERR_UNKNOWN_FIELD: return "unknown_field";
    case VF_IPC_ERR_DUPLICATE: return "duplicate_field";
    case VF_IPC_ERR_RANGE: return "out_of_range";
    case VF_IPC_ERR_VERSION: return "bad_version";
    case VF_IPC_ERR_NOMEM: return "out_of_memory";
    case VF_IPC_ERR_FD: return "bad_fd";
    }
    return "unknown_error";
}

int64_t vf_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Blocks until the socket is writable; only used if the caller handed us a
 * non-blocking socket. Sending has no deadline: the peer is our own child and
 * the broker kills it on overrun, which unblocks us with EPIPE. */
static int wait_writable(int sock)
{
    struct pollfd pfd = { .fd = sock, .events = POLLOUT };
    for (;;) {
        int r = poll(&pfd, 1, -1);
        if (r > 0)
            return (pfd.revents & POLLNVAL) ? -1 : 0;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

/* Sends iov[0..n_iov) (the length prefix first) as one stream of bytes. */
static vf_ipc_err send_all(int sock, struct iovec *cur, int n_iov, int pass_fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    bool fd_pending = pass_fd >= 0;

    while (n_iov > 0) {
        struct msghdr msg = { .msg_iov = cur, .msg_iovlen = (size_t)n_iov };
        if (fd_pending) {
            memset(&control, 0, sizeof control);
            msg.msg_control = control.buf;
            msg.msg_controllen = sizeof control.buf;
            struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
            cm->cmsg_level = SOL_SOCKET;
            cm->cmsg_type = SCM_RIGHTS;
            cm->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
        }
        ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_writable(sock) == 0)
                continue;
            return VF_IPC_ERR_IO;
        }
        /* Any accepted byte carried the fd with it; never send it twice. */
        if (n > 0)
            fd_pending = false;
        size_t done = (size_t)n;
        while (n_iov > 0 && done >= cur->iov_len) {
            done -= cur->iov_len;
            cur++;
            n_iov--;
        }
        if (n_iov > 0) {
            cur->iov_base = (char *)cur->iov_base + done;
            cur->iov_len -= done;
        }
    }
    return VF_IPC_OK;
}

vf_ipc_err vf_ipc_send_frame(int sock, const void *payload, size_t len, int pass_fd)
{
    vf_ipc_part part = { payload, len };   /* the parts sender checks size and NULL */
    return vf_ipc_send_frame_parts(sock, &part, 1, pass_fd);
}

vf_ipc_err vf_ipc_send_frame_parts(int sock, const vf_ipc_part *parts, size_t n_parts, int pass_fd)
{
    if (n_parts > VF_IPC_MAX_PARTS)
        return VF_IPC_ERR_IO;
    uint8_t prefix[4];
    struct iovec iov[1 + VF_IPC_MAX_PARTS] = { { .iov_base = prefix, .iov_len = sizeof prefix } };
    int n_iov = 1;
    size_t len = 0;
    for (size_t i = 0; i < n_parts; i++) {
        if (parts[i].len == 0)
            continue;
        if (parts[i].data == NULL)
            return VF_IPC_ERR_IO;
        if (parts[i].len > UINT32_MAX - len)
            return VF_IPC_ERR_TOO_LARGE;
        len += parts[i].len;
        iov[n_iov++] = (struct iovec){ .iov_base = (void *)parts[i].data, .iov_len = parts[i].len };
    }
    prefix[0] = (uint8_t)(len >> 24);
    prefix[1] = (uint8_t)(len >> 16);
    prefix[2] = (uint8_t)(len >> 8);
    prefix[3] = (uint8_t)len;
    return send_all(sock, iov, n_iov, pass_fd);
}

/* State of one frame being received: fds that arrived so far and the deadline. */
typedef struct {
    int sock;
    int64_t deadline_ms;
    int fd;            /* the one passed fd, or -1 */
    bool fd_rejected;  /* more than one fd, a truncated control message, or a late fd */
    bool first_read;
} frame_rx;

static void close_quietly(int fd)
{
    int saved = errno;
    close(fd);
    errno = saved;
}

/* Takes ownership of every fd in the control data: keeps a single fd from the
 * first read, closes anything else and marks the frame as rejected. */
static void collect_fds(frame_rx *rx, struct msghdr *msg)
{
    if (msg->msg_flags & MSG_CTRUNC)
        rx->fd_rejected = true;
    bool may_keep = rx->first_read && rx->fd < 0 && !rx->fd_rejected;
    int fd = -1;
    size_t arrived = vf_ipc_take_fds(msg, &fd, may_keep ? 1 : 0);
    if (fd >= 0)
        rx->fd = fd;
    if (arrived > (fd >= 0 ? 1u : 0u))
        rx->fd_rejected = true;
}

/* Waits for readability within the deadline. Data already queued is read even
 * when the deadline has just passed: poll with a zero timeout still reports it. */
static vf_ipc_err wait_readable(const frame_rx *rx)
{
    struct pollfd pfd = { .fd = rx->sock, .events = POLLIN };
    for (;;) {
        int timeout = -1;
        if (rx->deadline_ms >= 0) {
            int64_t left = rx->deadline_ms - vf_now_ms();
            if (left < 0)
                left = 0;
            timeout = left > INT_MAX ? INT_MAX : (int)left;
        }
        int r = poll(&pfd, 1, timeout);
        if (r > 0)
            return (pfd.revents & POLLNVAL) ? VF_IPC_ERR_IO : VF_IPC_OK;
        if (r == 0) {
            if (rx->deadline_ms >= 0 && vf_now_ms() >= rx->deadline_ms)
                return VF_IPC_ERR_TIMEOUT;
            continue; /* poll's INT_MAX clamp expired before a far deadline */
        }
        if (errno != EINTR)
            return VF_IPC_ERR_IO;
    }
}

/* Reads exactly len bytes into dst, collecting any fds that arrive. */
static vf_ipc_err read_exact(frame_rx *rx, void *dst, size_t len)
{
    size_t got = 0;
    while (got < len) {
        union {
            char buf[CMSG_SPACE(VF_IPC_CMSG_FDS * sizeof(int))];
            struct cmsghdr align;
        } control;
        struct iovec iov = { .iov_base = (char *)dst + got, .iov_len = len - got };
        struct msghdr msg = {
            .msg_iov = &iov, .msg_iovlen = 1,
            .msg_control = control.buf, .msg_controllen = sizeof control.buf,
        };
        /* Read first, wait only when nothing is queued: a worker's result is
         * usually all there by the time its sender is seen, and a poll per
         * read cost two syscalls per frame. */
        ssize_t n = recvmsg(rx->sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return VF_IPC_ERR_IO;
            vf_ipc_err err = wait_readable(rx);
            if (err != VF_IPC_OK)
                return err;
            continue;
        }
        collect_fds(rx, &msg);
        rx->first_read = false;
        if (n == 0)
            return VF_IPC_ERR_EOF;
        got += (size_t)n;
    }
    return VF_IPC_OK;
}

vf_ipc_err vf_ipc_recv_frame(int sock, size_t max_len, int64_t deadline_ms,
                             void **payload, size_t *len, int *received_fd)
{
    return vf_ipc_recv_frame_gated(sock, max_len, deadline_ms, NULL, NULL, payload, len, received_fd);
}

vf_ipc_err vf_ipc_recv_frame_gated(int sock, size_t max_len, int64_t deadline_ms, vf_ipc_gate gate,
                                   void *gate_ctx, void **payload, size_t *len, int *received_fd)
{
    *payload = NULL;
    *len = 0;
    if (received_fd != NULL)
        *received_fd = -1;

    frame_rx rx = { .sock = sock, .deadline_ms = deadline_ms, .fd = -1,
                    .fd_rejected = false, .first_read = true };
    uint8_t prefix[4];
    uint8_t *buf = NULL;

    vf_ipc_err err = read_exact(&rx, prefix, sizeof prefix);
    if (err != VF_IPC_OK)
        goto fail;

    uint32_t want = (uint32_t)prefix[0] << 24 | (uint32_t)prefix[1] << 16 |
                    (uint32_t)prefix[2] << 8 | (uint32_t)prefix[3];
    if ((uint64_t)want > (uint64_t)max_len) {
        err = VF_IPC_ERR_TOO_LARGE;
        goto fail;
    }
    /* Refuse a smuggled fd before reading (and allocating for) the payload. */
    if (rx.fd_rejected || (received_fd == NULL && rx.fd >= 0)) {
        err = VF_IPC_ERR_FD;
        goto fail;
    }

    /* The length is known and sane: the caller may make us wait for room
     * before the payload is allocated and read (the peer waits meanwhile). */
    if (gate != NULL && (err = gate(want, gate_ctx)) != VF_IPC_OK)
        goto fail;
    buf = malloc(want > 0 ? want : 1);
    if (buf == NULL) {
        err = VF_IPC_ERR_NOMEM;
        goto fail;
    }
    err = read_exact(&rx, buf, want);
    if (err != VF_IPC_OK)
        goto fail;
    if (rx.fd_rejected) {
        err = VF_IPC_ERR_FD;
        goto fail;
    }

    *payload = buf;
    *len = want;
    if (received_fd != NULL)
        *received_fd = rx.fd;
    return VF_IPC_OK;

fail:
    free(buf);
    if (rx.fd >= 0)
        close_quietly(rx.fd);
    return err;
}
