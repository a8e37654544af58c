#include "broker/api/unix_listener.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy/socket_dir.h"

static int make_parents(const char *path)
{
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mode_t m = strncmp(dir, "/run", 4) == 0 ? 0755 : 0700;
        if (mkdir(dir, m) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return 0;
}

/* Is a daemon answering at sun? Non-blocking with a deadline, so a wedged
 * listener (full backlog, stopped process) cannot hold start-up forever:
 * anything but a refusal counts as "someone is there". */
static bool someone_listens(const struct sockaddr_un *sun)
{
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (probe < 0)
        return false;
    bool there = true;
    if (connect(probe, (const struct sockaddr *)sun, sizeof *sun) != 0) {
        if (errno == ECONNREFUSED || errno == ENOENT)
            there = false;
        else if (errno == EINPROGRESS) {
            struct pollfd p = { .fd = probe, .events = POLLOUT };
            int soerr = 0;
            socklen_t len = sizeof soerr;
            if (poll(&p, 1, VF_UNIX_PROBE_MS) == 1 && getsockopt(probe, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0)
                there = soerr != ECONNREFUSED;
        }
    }
    close(probe);
    return there;
}

static int stale_or_absent(const struct sockaddr_un *sun, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(sun->sun_path, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "%s exists and is not a socket; refusing to replace it", sun->sun_path);
        return -1;
    }
    if (someone_listens(sun)) {
        snprintf(err, errlen, "another verifetchd is already listening on %s", sun->sun_path);
        return -1;
    }
    return unlink(sun->sun_path);
}

int vf_unix_listen(const char *path, unsigned mode, struct stat *bound, char *err, size_t errlen)
{
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof sun.sun_path) {
        snprintf(err, errlen, "socket path is longer than %zu bytes: %s", sizeof sun.sun_path - 1, path);
        return -1;
    }
    memcpy(sun.sun_path, path, strlen(path) + 1);
    err[0] = '\0';
    if (make_parents(path) != 0 || vf_socket_dir_prepare(path, err, errlen) != 0 ||
        stale_or_absent(&sun, err, errlen) != 0) {
        if (!err[0])
            snprintf(err, errlen, "cannot prepare %s: %s", path, strerror(errno));
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    /* Bind under a tight umask so there is no window with a wider mode. */
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&sun, sizeof sun);
    umask(old);
    if (rc != 0 || chmod(path, mode) != 0 || listen(fd, VF_UNIX_BACKLOG) != 0 || lstat(path, bound) != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}
