/* Frames over a real AF_UNIX socketpair: caps, EOF, deadlines, fd passing. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/ipc_fds.h"
#include "ipc/ipc_frame.h"
#include "tests/support/syscall_trap.h"

static void make_pair(int sv[2])
{
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static void write_all(int fd, const void *p, size_t n)
{
    cr_assert_eq(write(fd, p, n), (ssize_t)n);
}

/* sendmsg with an arbitrary set of fds, to play a misbehaving peer. */
static void send_with_fds(int sock, const void *p, size_t n, const int *fds, size_t n_fds)
{
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = { .iov_base = (void *)p, .iov_len = n };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                          .msg_controllen = CMSG_SPACE(n_fds * sizeof(int)) };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(n_fds * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, n_fds * sizeof(int));
    cr_assert_eq(sendmsg(sock, &msg, 0), (ssize_t)n);
}

/* True when every write end of the pipe is closed: the read end reports EOF. */
static bool pipe_writers_gone(int read_end)
{
    struct pollfd pfd = { .fd = read_end, .events = POLLIN };
    if (poll(&pfd, 1, 1000) != 1)
        return false;
    char c;
    return read(read_end, &c, 1) == 0;
}

Test(ipc, frame_round_trip_without_fd)
{
    int sv[2];
    make_pair(sv);
    static const char msg[] = "\x82\xa1v\x01\xa3url\xa0";
    cr_assert_eq(vf_ipc_send_frame(sv[0], msg, sizeof msg, -1), VF_IPC_OK);
    void *payload;
    size_t len;
    int fd = 123;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 1024, vf_now_ms() + 1000, &payload, &len, &fd),
                 VF_IPC_OK);
    cr_assert_eq(len, sizeof msg);
    cr_assert_arr_eq(payload, msg, sizeof msg);
    cr_assert_eq(fd, -1);
    free(payload);
}

Test(ipc, frame_length_prefix_is_big_endian)
{
    int sv[2];
    make_pair(sv);
    char payload[258];
    memset(payload, 'x', sizeof payload);
    cr_assert_eq(vf_ipc_send_frame(sv[0], payload, sizeof payload, -1), VF_IPC_OK);
    unsigned char prefix[4];
    cr_assert_eq(read(sv[1], prefix, 4), 4);
    cr_assert_eq(prefix[0], 0);
    cr_assert_eq(prefix[1], 0);
    cr_assert_eq(prefix[2], 1);
    cr_assert_eq(prefix[3], 2);
}

Test(ipc, frame_empty_payload)
{
    int sv[2];
    make_pair(sv);
    cr_assert_eq(vf_ipc_send_frame(sv[0], NULL, 0, -1), VF_IPC_OK);
    void *payload = NULL;
    size_t len = 99;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 16, -1, &payload, &len, NULL), VF_IPC_OK);
    cr_assert_eq(len, 0);
    cr_assert_not_null(payload);
    free(payload);
}

/* A frame the prefix cannot describe, or a payload that is not there, sends nothing. */
Test(ipc, frame_unsendable_payload_sends_nothing)
{
    int sv[2];
    make_pair(sv);
    char one = 'x';
    cr_assert_eq(vf_ipc_send_frame(sv[0], NULL, 5, -1), VF_IPC_ERR_IO);
    cr_assert_eq(vf_ipc_send_frame(sv[0], &one, (size_t)UINT32_MAX + 1, -1), VF_IPC_ERR_TOO_LARGE);
    char buf[8];
    cr_assert_eq(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), -1, "bytes were sent for an unsendable frame");
    cr_assert_eq(errno, EAGAIN);
}

Test(ipc, frame_large_payload_survives_short_writes_and_reads)
{
    int sv[2];
    make_pair(sv);
    size_t n = 3u * 1024u * 1024u; /* far above the socket buffer */
    unsigned char *big = malloc(n);
    cr_assert_not_null(big);
    for (size_t i = 0; i < n; i++)
        big[i] = (unsigned char)(i * 7 + 3);
    pid_t child = fork();
    cr_assert_neq(child, -1);
    if (child == 0) {
        close(sv[1]);
        _exit(vf_ipc_send_frame(sv[0], big, n, -1) == VF_IPC_OK ? 0 : 1);
    }
    close(sv[0]);
    void *payload;
    size_t len;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], n, vf_now_ms() + 10000, &payload, &len, NULL),
                 VF_IPC_OK);
    cr_assert_eq(len, n);
    cr_assert_arr_eq(payload, big, n);
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    free(payload);
    free(big);
}

Test(ipc, frame_oversized_prefix_rejected_before_reading_payload)
{
    int sv[2];
    make_pair(sv);
    /* Claims 2 GiB; the 16 bytes after it must still be unread afterwards. */
    write_all(sv[0], "\x7f\xff\xff\xff" "0123456789abcdef", 20);
    void *payload = (void *)1;
    size_t len = 7;
    int64_t start = vf_now_ms();
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 1024 * 1024, start + 5000, &payload, &len, NULL),
                 VF_IPC_ERR_TOO_LARGE);
    cr_assert_lt(vf_now_ms() - start, 1000);
    cr_assert_null(payload);
    cr_assert_eq(len, 0);
    char rest[16];
    cr_assert_eq(recv(sv[1], rest, sizeof rest, MSG_DONTWAIT), 16);
    cr_assert_arr_eq(rest, "0123456789abcdef", 16);
}

Test(ipc, frame_cap_is_inclusive)
{
    int sv[2];
    make_pair(sv);
    cr_assert_eq(vf_ipc_send_frame(sv[0], "abcd", 4, -1), VF_IPC_OK);
    cr_assert_eq(vf_ipc_send_frame(sv[0], "abcde", 5, -1), VF_IPC_OK);
    void *payload;
    size_t len;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 4, -1, &payload, &len, NULL), VF_IPC_OK);
    free(payload);
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 4, -1, &payload, &len, NULL), VF_IPC_ERR_TOO_LARGE);
}

Test(ipc, frame_eof_mid_payload)
{
    int sv[2];
    make_pair(sv);
    write_all(sv[0], "\x00\x00\x00\x64" "only ten b", 14);
    close(sv[0]);
    void *payload = (void *)1;
    size_t len;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 1024, vf_now_ms() + 2000, &payload, &len, NULL),
                 VF_IPC_ERR_EOF);
    cr_assert_null(payload);
}

Test(ipc, frame_eof_mid_prefix_and_before_anything)
{
    int sv[2];
    make_pair(sv);
    write_all(sv[0], "\x00\x00", 2);
    close(sv[0]);
    void *payload;
    size_t len;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 1024, vf_now_ms() + 2000, &payload, &len, NULL),
                 VF_IPC_ERR_EOF);

    int sv2[2];
    make_pair(sv2);
    close(sv2[0]);
    cr_assert_eq(vf_ipc_recv_frame(sv2[1], 1024, -1, &payload, &len, NULL), VF_IPC_ERR_EOF);
}

Test(ipc, frame_deadline_bounds_a_stalled_peer)
{
    int sv[2];
    make_pair(sv);
    write_all(sv[0], "\x00\x00\x00\x0a" "abc", 7); /* then stall with the socket open */
    void *payload;
    size_t len;
    int fd;
    int64_t start = vf_now_ms();
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 1024, start + 100, &payload, &len, &fd),
                 VF_IPC_ERR_TIMEOUT);
    int64_t took = vf_now_ms() - start;
    cr_assert_geq(took, 100);
    cr_assert_lt(took, 1000);
    cr_assert_eq(fd, -1);
}

Test(ipc, frame_deadline_in_the_past_still_reads_queued_frame)
{
    int sv[2];
    make_pair(sv);
    cr_assert_eq(vf_ipc_send_frame(sv[0], "ok", 2, -1), VF_IPC_OK);
    void *payload;
    size_t len;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 16, vf_now_ms() - 50, &payload, &len, NULL), VF_IPC_OK);
    free(payload);
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 16, vf_now_ms() - 50, &payload, &len, NULL),
                 VF_IPC_ERR_TIMEOUT);
}

Test(ipc, frame_passes_a_pipe_fd)
{
    int sv[2], pfd[2];
    make_pair(sv);
    cr_assert_eq(pipe(pfd), 0);
    cr_assert_eq(vf_ipc_send_frame(sv[0], "job", 3, pfd[0]), VF_IPC_OK);
    close(pfd[0]);

    void *payload;
    size_t len;
    int got = -1;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 16, vf_now_ms() + 1000, &payload, &len, &got), VF_IPC_OK);
    cr_assert_eq(len, 3);
    cr_assert_arr_eq(payload, "job", 3);
    free(payload);
    cr_assert_geq(got, 0);
    cr_assert(fcntl(got, F_GETFD) & FD_CLOEXEC, "received fd must be close-on-exec");

    write_all(pfd[1], "through the pipe", 16);
    char buf[32];
    cr_assert_eq(read(got, buf, sizeof buf), 16);
    cr_assert_arr_eq(buf, "through the pipe", 16);
    close(got);
    close(pfd[1]);
}

Test(ipc, frame_smuggled_fd_is_closed_and_rejected)
{
    int sv[2], pfd[2];
    make_pair(sv);
    cr_assert_eq(pipe(pfd), 0);
    cr_assert_eq(vf_ipc_send_frame(sv[0], "result", 6, pfd[1]), VF_IPC_OK);
    close(pfd[1]); /* the only write end left is the one in flight */

    void *payload = (void *)1;
    size_t len;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 16, vf_now_ms() + 1000, &payload, &len, NULL),
                 VF_IPC_ERR_FD);
    cr_assert_null(payload);
    cr_assert(pipe_writers_gone(pfd[0]), "smuggled fd was leaked");
}

Test(ipc, frame_more_than_one_fd_is_rejected_and_all_closed)
{
    int sv[2], pfd[2];
    make_pair(sv);
    cr_assert_eq(pipe(pfd), 0);
    int fds[3] = { pfd[1], dup(pfd[1]), dup(pfd[1]) };
    send_with_fds(sv[0], "\x00\x00\x00\x01" "x", 5, fds, 3);
    for (int i = 0; i < 3; i++)
        close(fds[i]);

    void *payload;
    size_t len;
    int got = 42;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 16, vf_now_ms() + 1000, &payload, &len, &got),
                 VF_IPC_ERR_FD);
    cr_assert_eq(got, -1);
    cr_assert(pipe_writers_gone(pfd[0]), "extra fds were leaked");
}

/* The helper every SCM_RIGHTS receiver uses: keeps the first n, closes the rest. */
static size_t receive_keeping(int sock, int *keep, size_t max_keep)
{
    char byte;
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                          .msg_controllen = sizeof control.buf };
    cr_assert_eq(recvmsg(sock, &msg, MSG_CMSG_CLOEXEC), 1);
    return vf_ipc_take_fds(&msg, keep, max_keep);
}

Test(ipc, take_fds_keeps_the_first_and_closes_every_other)
{
    int sv[2], kept_pipe[2], extra_pipe[2];
    make_pair(sv);
    cr_assert_eq(pipe(kept_pipe), 0);
    cr_assert_eq(pipe(extra_pipe), 0);
    int fds[3] = { kept_pipe[1], extra_pipe[1], dup(extra_pipe[1]) };
    send_with_fds(sv[0], "x", 1, fds, 3);
    for (int i = 0; i < 3; i++)
        close(fds[i]);

    int keep[2] = { -7, -7 };
    errno = 1234;
    cr_assert_eq(receive_keeping(sv[1], keep, 1), 3, "every arrived fd is counted");
    cr_assert_eq(errno, 1234, "errno is preserved");
    cr_assert_geq(keep[0], 0);
    cr_assert_eq(keep[1], -7, "slots past max_keep are left alone");
    cr_assert(pipe_writers_gone(extra_pipe[0]), "fds past max_keep were leaked");
    cr_assert_eq(write(keep[0], "k", 1), 1, "the kept fd is the first one sent, still open");
    char c;
    cr_assert_eq(read(kept_pipe[0], &c, 1), 1);
    close(keep[0]);
    cr_assert(pipe_writers_gone(kept_pipe[0]));
}

Test(ipc, take_fds_with_nothing_to_keep_closes_all)
{
    int sv[2], pfd[2];
    make_pair(sv);
    cr_assert_eq(pipe(pfd), 0);
    int fds[2] = { pfd[1], dup(pfd[1]) };
    send_with_fds(sv[0], "x", 1, fds, 2);
    close(fds[0]);
    close(fds[1]);
    cr_assert_eq(receive_keeping(sv[1], NULL, 0), 2);
    cr_assert(pipe_writers_gone(pfd[0]), "fds were leaked");
}

Test(ipc, frame_fd_after_the_first_read_is_rejected)
{
    int sv[2], pfd[2];
    make_pair(sv);
    cr_assert_eq(pipe(pfd), 0);
    write_all(sv[0], "\x00\x00\x00\x02", 4);
    int fd = pfd[1];
    /* Let the receiver consume the prefix alone before the fd-bearing bytes arrive. */
    pid_t child = fork();
    cr_assert_neq(child, -1);
    if (child == 0) {
        usleep(100 * 1000);
        send_with_fds(sv[0], "hi", 2, &fd, 1);
        _exit(0);
    }
    close(pfd[1]);
    close(sv[0]);

    void *payload;
    size_t len;
    int got = 42;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 16, vf_now_ms() + 3000, &payload, &len, &got),
                 VF_IPC_ERR_FD);
    cr_assert_eq(got, -1);
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(pipe_writers_gone(pfd[0]), "late fd was leaked");
}

Test(ipc, frame_fd_is_closed_when_frame_fails)
{
    int sv[2], pfd[2];
    make_pair(sv);
    cr_assert_eq(pipe(pfd), 0);
    send_with_fds(sv[0], "\x00\x00\x10\x00", 4, &pfd[1], 1); /* 4096 > cap below */
    close(pfd[1]);
    void *payload;
    size_t len;
    int got = 42;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], 100, vf_now_ms() + 1000, &payload, &len, &got),
                 VF_IPC_ERR_TOO_LARGE);
    cr_assert_eq(got, -1);
    cr_assert(pipe_writers_gone(pfd[0]), "fd of a refused frame was leaked");
}

Test(ipc, frame_send_to_closed_peer_fails_without_sigpipe)
{
    int sv[2];
    make_pair(sv);
    close(sv[1]);
    cr_assert_eq(vf_ipc_send_frame(sv[0], "x", 1, -1), VF_IPC_ERR_IO);
}

Test(ipc, frame_send_of_bad_fd_fails)
{
    int sv[2];
    make_pair(sv);
    cr_assert_eq(vf_ipc_send_frame(sv[0], "x", 1, 987654), VF_IPC_ERR_IO);
}

Test(ipc, now_ms_is_monotonic_milliseconds)
{
    int64_t a = vf_now_ms();
    usleep(30 * 1000);
    int64_t b = vf_now_ms();
    cr_assert_geq(b - a, 30);
    cr_assert_lt(b - a, 2000);
}

/* A frame already queued is read straight away: no poll() before the reads
 * (there were two per frame, one before the length and one before the
 * payload). */
typedef struct {
    int sock;
    vf_ipc_err err;
    void *payload;
    size_t len;
} queued_read;

static void read_queued(void *arg)
{
    queued_read *q = arg;
    q->err = vf_ipc_recv_frame(q->sock, 64, vf_now_ms() + 1000, &q->payload, &q->len, NULL);
}

Test(ipc_frame, queued_frame_is_read_without_polling)
{
    int sv[2];
    make_pair(sv);
    const char msg[] = "already here";
    cr_assert_eq(vf_ipc_send_frame(sv[0], msg, sizeof msg, -1), VF_IPC_OK);
    queued_read q = { .sock = sv[1] };
    int polls = syscall_trap_run(SYS_poll, read_queued, &q);
    if (polls < 0)
        cr_skip_test("no seccomp filter here");
    cr_assert_eq(polls, 0, "%d poll() calls for a frame that was already queued", polls);
    cr_assert_eq(q.err, VF_IPC_OK, "%s", vf_ipc_strerror(q.err));
    cr_assert_eq(q.len, sizeof msg);
    cr_assert_str_eq(q.payload, msg);
    free(q.payload);
    close(sv[0]);
    close(sv[1]);
}
