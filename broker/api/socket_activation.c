#include "broker/api/socket_activation.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Strict decimal: digits only, no sign, no spaces, no overflow. */
static bool parse_decimal(const char *s, long max, long *out)
{
    if (!s || !*s)
        return false;
    long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        int d = *p - '0';
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static void forget_environment(void)
{
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
}

static int sockopt_int(int fd, int name, int *value)
{
    socklen_t len = sizeof *value;
    return getsockopt(fd, SOL_SOCKET, name, value, &len);
}

/* 0 when fd is a listening AF_UNIX SOCK_STREAM socket, else -1 with err. */
static int check_listener(int fd, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "socket activation: fd %d is not open: %s", fd, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "socket activation: fd %d is not a socket", fd);
        return -1;
    }
    int domain = 0, type = 0, listening = 0;
    if (sockopt_int(fd, SO_DOMAIN, &domain) != 0 || sockopt_int(fd, SO_TYPE, &type) != 0 ||
        sockopt_int(fd, SO_ACCEPTCONN, &listening) != 0) {
        snprintf(err, errlen, "socket activation: cannot inspect fd %d: %s", fd, strerror(errno));
        return -1;
    }
    if (domain != AF_UNIX) {
        snprintf(err, errlen, "socket activation: fd %d is not an AF_UNIX socket (family %d); "
                 "the unit must use ListenStream=/path", fd, domain);
        return -1;
    }
    if (type != SOCK_STREAM) {
        snprintf(err, errlen, "socket activation: fd %d is not a SOCK_STREAM socket (type %d); "
                 "the unit must use ListenStream=", fd, type);
        return -1;
    }
    if (!listening) {
        snprintf(err, errlen, "socket activation: fd %d is not listening (Accept=yes is not supported)", fd);
        return -1;
    }
    return 0;
}

static int activation_fd(char *err, size_t errlen)
{
    const char *pid_text = getenv("LISTEN_PID");
    if (!pid_text)
        return -1;
    long pid = 0;
    if (!parse_decimal(pid_text, INT_MAX, &pid) || pid == 0) {
        snprintf(err, errlen, "socket activation: LISTEN_PID is not a process id: '%.32s'", pid_text);
        return -2;
    }
    /* Variables meant for a parent that exec'd us without clearing them. */
    if (pid != (long)getpid())
        return -1;

    const char *fds_text = getenv("LISTEN_FDS");
    long n = 0;
    if (!fds_text) {
        snprintf(err, errlen, "socket activation: LISTEN_PID names this process but LISTEN_FDS is unset");
        return -2;
    }
    if (!parse_decimal(fds_text, INT_MAX - VF_LISTEN_FDS_START, &n)) {
        snprintf(err, errlen, "socket activation: LISTEN_FDS is not a count: '%.32s'", fds_text);
        return -2;
    }
    if (n != 1) {
        snprintf(err, errlen, "socket activation: expected exactly 1 socket, systemd passed %ld "
                 "(the .socket unit must have one ListenStream=)", n);
        return -2;
    }
    int fd = VF_LISTEN_FDS_START;
    if (check_listener(fd, err, errlen) != 0)
        return -2;
    int flags = fcntl(fd, F_GETFD);
    if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0) {
        snprintf(err, errlen, "socket activation: cannot set close-on-exec on fd %d: %s", fd, strerror(errno));
        return -2;
    }
    return fd;
}

int vf_systemd_listen_fd(char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    int rc = activation_fd(err, errlen);
    forget_environment();
    return rc;
}

int vf_unix_socket_path(int fd, char *path, size_t pathlen, char *err, size_t errlen)
{
    struct sockaddr_un sun;
    socklen_t len = sizeof sun;
    memset(&sun, 0, sizeof sun);
    if (getsockname(fd, (struct sockaddr *)&sun, &len) != 0) {
        snprintf(err, errlen, "getsockname on fd %d: %s", fd, strerror(errno));
        return -1;
    }
    size_t off = offsetof(struct sockaddr_un, sun_path);
    if (sun.sun_family != AF_UNIX || len <= off || sun.sun_path[0] == '\0') {
        snprintf(err, errlen, "fd %d is not bound to a filesystem path", fd);
        return -1;
    }
    size_t n = strnlen(sun.sun_path, len - off);
    if (n >= pathlen) {
        snprintf(err, errlen, "socket path of fd %d does not fit in %zu bytes", fd, pathlen);
        return -1;
    }
    memcpy(path, sun.sun_path, n);
    path[n] = '\0';
    return 0;
}
