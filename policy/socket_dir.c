#include "policy/socket_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Splits socket_path into its directory and that directory's parent. */
static int split(const char *socket_path, char *dir, size_t dirlen, char *parent, size_t parentlen)
{
    const char *slash = strrchr(socket_path, '/');
    if (!slash || slash == socket_path) { /* "x.sock" or "/x.sock": no directory of its own */
        snprintf(dir, dirlen, "%s", slash ? "/" : ".");
        snprintf(parent, parentlen, "%s", dir);
        return 0;
    }
    size_t n = (size_t)(slash - socket_path);
    if (n >= dirlen || n >= parentlen)
        return -1;
    memcpy(dir, socket_path, n);
    dir[n] = '\0';
    const char *pslash = strrchr(dir, '/');
    size_t pn = pslash == NULL ? 0 : pslash == dir ? 1 : (size_t)(pslash - dir);
    if (pn == 0)
        snprintf(parent, parentlen, ".");
    else
        snprintf(parent, parentlen, "%.*s", (int)pn, dir);
    return 0;
}

/* Is the directory's parent writable by others, so that anyone could have
 * made the directory? */
static bool in_shared_dir(const char *parent)
{
    struct stat st;
    return stat(parent, &st) == 0 && (st.st_mode & S_IWOTH);
}

static int verify(const char *dir, bool creating, bool created, char *err, size_t errlen)
{
    struct stat lst, st;
    if (lstat(dir, &lst) != 0) {
        snprintf(err, errlen, "socket directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if (S_ISLNK(lst.st_mode)) {
        snprintf(err, errlen, "socket directory %s is a symlink; refusing it (another user may own it)", dir);
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "socket directory %s: %s", dir, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    uid_t me = geteuid();
    int rc = -1;
    if (st.st_dev != lst.st_dev || st.st_ino != lst.st_ino)
        snprintf(err, errlen, "socket directory %s changed while it was checked", dir);
    else if (st.st_uid != me && (creating || st.st_uid != 0))
        snprintf(err, errlen, "socket directory %s is owned by uid %u, not %u; refusing it", dir,
                 (unsigned)st.st_uid, (unsigned)me);
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        snprintf(err, errlen, "socket directory %s is writable by group or others (mode %03o); refusing it",
                 dir, (unsigned)(st.st_mode & 0777));
    else if (created && fchmod(fd, 0700) != 0) /* exact mode whatever the umask */
        snprintf(err, errlen, "socket directory %s: chmod: %s", dir, strerror(errno));
    else
        rc = 0;
    close(fd);
    return rc;
}

static int check(const char *socket_path, bool creating, char *err, size_t errlen)
{
    char dir[4096], parent[4096];
    if (split(socket_path, dir, sizeof dir, parent, sizeof parent) != 0) {
        snprintf(err, errlen, "socket path is too long: %s", socket_path);
        return -1;
    }
    if (!in_shared_dir(parent)) {
        if (!creating && in_shared_dir(dir)) {
            /* A socket right in /tmp: the socket itself is what could be planted. */
            struct stat st;
            if (lstat(socket_path, &st) == 0 && st.st_uid != geteuid() && st.st_uid != 0) {
                snprintf(err, errlen, "socket %s is owned by uid %u, not %u; refusing it", socket_path,
                         (unsigned)st.st_uid, (unsigned)geteuid());
                return -1;
            }
            return 0;
        }
        return 0;
    }
    bool created = creating && mkdir(dir, 0700) == 0;
    if (creating && !created && errno != EEXIST) {
        snprintf(err, errlen, "cannot create socket directory %s: %s", dir, strerror(errno));
        return -1;
    }
    return verify(dir, creating, created, err, errlen);
}

int vf_socket_dir_prepare(const char *socket_path, char *err, size_t errlen)
{
    return check(socket_path, true, err, errlen);
}

int vf_socket_dir_check(const char *socket_path, char *err, size_t errlen)
{
    return check(socket_path, false, err, errlen);
}
