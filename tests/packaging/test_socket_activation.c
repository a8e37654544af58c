/* vf_systemd_listen_fd: the sd_listen_fds protocol. Each case runs in a
 * forked child because it rewrites fd 3 and the environment, which belong to
 * the Criterion runner in the test process itself. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/api/socket_activation.h"

#include "child_report.h"

enum { ENV_PID = 1, ENV_FDS = 2, ENV_NAMES = 4 };

typedef struct {
    int rc;
    char err[512];
    int cloexec;        /* FD_CLOEXEC on fd 3 after the call, -1 when fd 3 is closed */
    int env_left;       /* ENV_* bits still set after the call */
    int accepted;       /* a client connect()ed to the path was accept()ed on rc */
    char path[128];     /* vf_unix_socket_path(rc) */
} outcome;

typedef enum { FD3_LISTENING_UNIX, FD3_CONNECTED_UNIX, FD3_DGRAM_UNIX, FD3_TCP_LISTENER, FD3_PIPE, FD3_CLOSED } fd3_kind;

typedef struct {
    fd3_kind fd3;
    const char *listen_pid;   /* "self" = getpid(), "other" = a pid that is not ours, NULL = unset */
    const char *listen_fds;   /* NULL = unset */
} scenario;

static char sock_dir[64];
static char sock_path[96];   /* < sun_path, so every copy into it fits */

static void make_dir(void)
{
    snprintf(sock_dir, sizeof sock_dir, "/tmp/vf-sa-XXXXXX");
    cr_assert_not_null(mkdtemp(sock_dir));
    snprintf(sock_path, sizeof sock_path, "%s/s.sock", sock_dir);
}

static void remove_dir(void)
{
    unlink(sock_path);
    rmdir(sock_dir);
}

TestSuite(socket_activation, .init = make_dir, .fini = remove_dir);

static int unix_listener(int type, int do_listen)
{
    int fd = socket(AF_UNIX, type, 0);
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", sock_path);
    unlink(sock_path);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof sun) != 0)
        _exit(90);
    if (do_listen && listen(fd, 4) != 0)
        _exit(91);
    return fd;
}

/* An fd of the requested kind, not yet placed at 3. */
static int make_fd3(fd3_kind kind)
{
    int fd = -1;
    int pair[2];
    switch (kind) {
    case FD3_LISTENING_UNIX:
        return unix_listener(SOCK_STREAM, 1);
    case FD3_CONNECTED_UNIX:
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0)
            _exit(92);
        return pair[0];
    case FD3_DGRAM_UNIX:
        return unix_listener(SOCK_DGRAM, 0);
    case FD3_TCP_LISTENER: {
        struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(fd, 4) != 0)
            _exit(93);
        return fd;
    }
    case FD3_PIPE:
        if (pipe(pair) != 0)
            _exit(94);
        return pair[0];
    case FD3_CLOSED:
        return -1;
    }
    return -1;
}

static void child(void *ctx, int report)
{
    const scenario *sc = ctx;
    /* Keep the report pipe clear of fd 3 before fd 3 is rewritten. */
    report = fcntl(report, F_DUPFD_CLOEXEC, 20);
    int fd = make_fd3(sc->fd3);
    if (fd >= 0 && fd != VF_LISTEN_FDS_START) {
        if (dup2(fd, VF_LISTEN_FDS_START) < 0)
            _exit(95);
        close(fd);
    } else if (fd < 0) {
        close(VF_LISTEN_FDS_START);
    }
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    char pid_text[32];
    if (sc->listen_pid) {
        pid_t pid = strcmp(sc->listen_pid, "self") == 0 ? getpid()
                    : strcmp(sc->listen_pid, "other") == 0 ? getppid() : -1;
        if (pid > 0)
            snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
        else
            snprintf(pid_text, sizeof pid_text, "%s", sc->listen_pid);
        setenv("LISTEN_PID", pid_text, 1);
    }
    if (sc->listen_fds)
        setenv("LISTEN_FDS", sc->listen_fds, 1);
    setenv("LISTEN_FDNAMES", "verifetch.socket", 1);

    outcome o;
    memset(&o, 0, sizeof o);
    o.rc = vf_systemd_listen_fd(o.err, sizeof o.err);
    int flags = fcntl(VF_LISTEN_FDS_START, F_GETFD);
    o.cloexec = flags < 0 ? -1 : (flags & FD_CLOEXEC) != 0;
    o.env_left = (getenv("LISTEN_PID") ? ENV_PID : 0) | (getenv("LISTEN_FDS") ? ENV_FDS : 0) |
                 (getenv("LISTEN_FDNAMES") ? ENV_NAMES : 0);
    if (o.rc >= 0) {
        int c = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        snprintf(sun.sun_path, sizeof sun.sun_path, "%s", sock_path);
        if (c >= 0 && connect(c, (struct sockaddr *)&sun, sizeof sun) == 0) {
            int a = accept(o.rc, NULL, NULL);
            o.accepted = a >= 0;
            if (a >= 0)
                close(a);
        }
        char perr[96];
        if (vf_unix_socket_path(o.rc, o.path, sizeof o.path, perr, sizeof perr) != 0)
            snprintf(o.path, sizeof o.path, "ERROR: %s", perr);
    }
    if (write(report, &o, sizeof o) != (ssize_t)sizeof o)
        _exit(96);
    _exit(0);
}

static outcome run(scenario sc)
{
    outcome o;
    int status;
    ssize_t got = child_report(child, &sc, &o, sizeof o, &status);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed to set up (status 0x%x)", status);
    cr_assert_eq(got, (ssize_t)sizeof o);
    o.err[sizeof o.err - 1] = '\0';
    o.path[sizeof o.path - 1] = '\0';
    return o;
}

Test(socket_activation, accepts_one_listening_unix_socket)
{
    outcome o = run((scenario){ FD3_LISTENING_UNIX, "self", "1" });
    cr_assert_eq(o.rc, 3, "rc %d: %s", o.rc, o.err);
    cr_assert_eq(o.cloexec, 1, "fd 3 must be close-on-exec so workers never inherit it");
    cr_assert_eq(o.env_left, 0, "activation variables left in the environment: 0x%x", o.env_left);
    cr_assert_eq(o.accepted, 1, "a client connecting to the unit's path was not accepted");
    cr_assert_str_eq(o.path, sock_path);
}

Test(socket_activation, absent_variables_mean_not_activated)
{
    outcome o = run((scenario){ FD3_LISTENING_UNIX, NULL, NULL });
    cr_assert_eq(o.rc, -1);
    cr_assert_str_eq(o.err, "");
    cr_assert_eq(o.cloexec, 0, "fd 3 must be left alone when not activated");
    cr_assert_eq(o.env_left, 0);
}

Test(socket_activation, listen_fds_without_pid_is_not_for_us)
{
    outcome o = run((scenario){ FD3_LISTENING_UNIX, NULL, "1" });
    cr_assert_eq(o.rc, -1);
    cr_assert_eq(o.env_left, 0);
}

Test(socket_activation, another_process_pid_is_not_for_us)
{
    outcome o = run((scenario){ FD3_LISTENING_UNIX, "other", "1" });
    cr_assert_eq(o.rc, -1, "rc %d: %s", o.rc, o.err);
    cr_assert_eq(o.cloexec, 0, "fd 3 belongs to someone else; it must be left alone");
    cr_assert_eq(o.env_left, 0, "stale variables must still be cleared");
}

Test(socket_activation, malformed_pid_is_broken)
{
    const char *bad[] = { "12x", "-5", " 7", "", "0", "99999999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        outcome o = run((scenario){ FD3_LISTENING_UNIX, bad[i], "1" });
        cr_assert_eq(o.rc, -2, "LISTEN_PID='%s' gave %d", bad[i], o.rc);
        cr_assert_not_null(strstr(o.err, "LISTEN_PID"), "err: %s", o.err);
        cr_assert_eq(o.env_left, 0);
    }
}

Test(socket_activation, missing_listen_fds_is_broken)
{
    outcome o = run((scenario){ FD3_LISTENING_UNIX, "self", NULL });
    cr_assert_eq(o.rc, -2);
    cr_assert_not_null(strstr(o.err, "LISTEN_FDS is unset"), "err: %s", o.err);
}

Test(socket_activation, malformed_listen_fds_is_broken)
{
    const char *bad[] = { "one", "1 ", "+1", "-1", "" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        outcome o = run((scenario){ FD3_LISTENING_UNIX, "self", bad[i] });
        cr_assert_eq(o.rc, -2, "LISTEN_FDS='%s' gave %d", bad[i], o.rc);
        cr_assert_not_null(strstr(o.err, "LISTEN_FDS is not a count"), "err: %s", o.err);
    }
}

Test(socket_activation, wrong_socket_count_is_broken)
{
    const char *counts[] = { "0", "2", "17" };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        outcome o = run((scenario){ FD3_LISTENING_UNIX, "self", counts[i] });
        cr_assert_eq(o.rc, -2);
        char want[64];
        snprintf(want, sizeof want, "systemd passed %s ", counts[i]);
        cr_assert_not_null(strstr(o.err, want), "err: %s", o.err);
        cr_assert_eq(o.env_left, 0);
    }
}

Test(socket_activation, closed_fd3_is_broken)
{
    outcome o = run((scenario){ FD3_CLOSED, "self", "1" });
    cr_assert_eq(o.rc, -2);
    cr_assert_not_null(strstr(o.err, "not open"), "err: %s", o.err);
}

Test(socket_activation, pipe_is_not_a_socket)
{
    outcome o = run((scenario){ FD3_PIPE, "self", "1" });
    cr_assert_eq(o.rc, -2);
    cr_assert_not_null(strstr(o.err, "not a socket"), "err: %s", o.err);
}

Test(socket_activation, tcp_listener_is_refused)
{
    outcome o = run((scenario){ FD3_TCP_LISTENER, "self", "1" });
    cr_assert_eq(o.rc, -2);
    cr_assert_not_null(strstr(o.err, "not an AF_UNIX socket"), "err: %s", o.err);
}

Test(socket_activation, datagram_socket_is_refused)
{
    outcome o = run((scenario){ FD3_DGRAM_UNIX, "self", "1" });
    cr_assert_eq(o.rc, -2);
    cr_assert_not_null(strstr(o.err, "not a SOCK_STREAM socket"), "err: %s", o.err);
}

Test(socket_activation, connected_socket_is_refused)
{
    outcome o = run((scenario){ FD3_CONNECTED_UNIX, "self", "1" });
    cr_assert_eq(o.rc, -2);
    cr_assert_not_null(strstr(o.err, "not listening"), "err: %s", o.err);
    cr_assert_eq(o.cloexec, 0, "a refused fd must not be modified");
}

Test(socket_activation, unnamed_socket_has_no_path)
{
    int pair[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    char path[128], err[128];
    cr_assert_eq(vf_unix_socket_path(pair[0], path, sizeof path, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "not bound to a filesystem path"), "err: %s", err);
    close(pair[0]);
    close(pair[1]);
}
