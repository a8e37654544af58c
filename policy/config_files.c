/* Files and environment the config points at: provider keys and the CA bundle.
 * Messages name the file or variable and sizes, never a key byte. */
#include "policy/config_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void vf_cfg_wipe_free(char *secret)
{
    if (!secret)
        return;
    explicit_bzero(secret, strlen(secret));
    free(secret);
}

/* Reads fd to EOF into a NUL-terminated heap buffer; fails (errno EFBIG) past cap. */
static int read_all(int fd, size_t cap, char **out, size_t *out_len)
{
    size_t size = 0, alloc = 4096 < cap + 1 ? 4096 : cap + 1;
    char *buf = malloc(alloc + 1);
    if (!buf)
        return -1;
    for (;;) {
        if (size == alloc) {
            if (alloc > cap) {
                explicit_bzero(buf, size);
                free(buf);
                errno = EFBIG;
                return -1;
            }
            size_t grown = alloc * 2 > cap + 1 ? cap + 1 : alloc * 2;
            char *bigger = malloc(grown + 1);
            if (!bigger) {
                explicit_bzero(buf, size);
                free(buf);
                return -1;
            }
            /* Copy rather than realloc so no stale copy of a key stays behind. */
            memcpy(bigger, buf, size);
            explicit_bzero(buf, size);
            free(buf);
            buf = bigger;
            alloc = grown;
        }
        ssize_t n = read(fd, buf + size, alloc - size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int saved = errno;
            explicit_bzero(buf, size);
            free(buf);
            errno = saved;
            return -1;
        }
        if (n == 0)
            break;
        size += (size_t)n;
    }
    if (size > cap) {
        explicit_bzero(buf, size);
        free(buf);
        errno = EFBIG;
        return -1;
    }
    buf[size] = '\0';
    *out = buf;
    *out_len = size;
    return 0;
}

/* Shared rules for keys from files and the environment. Takes ownership of buf. */
static int accept_key(char *buf, size_t n, const char *what, char **secret, char *why,
                      size_t whylen)
{
    if (n > 0 && buf[n - 1] == '\n') {
        buf[--n] = '\0';
        if (n > 0 && buf[n - 1] == '\r')
            buf[--n] = '\0';
    }
    const char *problem = NULL;
    char detail[96] = "";
    if (n == 0) {
        problem = "is empty";
    } else if (memchr(buf, '\r', n) || memchr(buf, '\n', n) || memchr(buf, '\0', n)) {
        problem = "contains a CR, LF or NUL byte";
    } else if (n < VF_CFG_KEY_MIN) {
        snprintf(detail, sizeof detail, "is too short (%zu bytes; at least %u)", n,
                 VF_CFG_KEY_MIN);
    } else if (n > VF_CFG_KEY_MAX) {
        snprintf(detail, sizeof detail, "is longer than %u bytes", VF_CFG_KEY_MAX);
    }
    if (problem || detail[0]) {
        snprintf(why, whylen, "%s %s", what, problem ? problem : detail);
        explicit_bzero(buf, n);
        free(buf);
        return -1;
    }
    *secret = buf;
    return 0;
}

int vf_cfg_key_from_file(const char *path, char **secret, char *why, size_t whylen)
{
    char what[VF_CFG_STRING_MAX + 16];
    snprintf(what, sizeof what, "key file %s", path);
    /* O_NONBLOCK: a FIFO planted at the path must not hang the broker. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, whylen, "%s: %s", what, strerror(errno));
        return -1;
    }
    struct stat st;
    int rc = -1;
    if (fstat(fd, &st) != 0) {
        snprintf(why, whylen, "%s: %s", what, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "%s is not a regular file", what);
    } else if (st.st_uid != geteuid() && st.st_uid != 0) {
        snprintf(why, whylen, "%s is owned by uid %u; it must belong to the broker (uid %u) or root",
                 what, (unsigned)st.st_uid, (unsigned)geteuid());
    } else if (st.st_mode & 077) {
        snprintf(why, whylen, "%s is %s by group/others (mode %04o); chmod 600 it", what,
                 (st.st_mode & 044) ? "readable" : "accessible", (unsigned)(st.st_mode & 07777));
    } else {
        char *buf = NULL;
        size_t n = 0;
        /* +2 leaves room for a trailing CRLF on a maximal key. */
        if (read_all(fd, VF_CFG_KEY_MAX + 2, &buf, &n) != 0) {
            if (errno == EFBIG)
                snprintf(why, whylen, "%s is longer than %u bytes", what, VF_CFG_KEY_MAX);
            else
                snprintf(why, whylen, "%s: %s", what, strerror(errno));
        } else {
            rc = accept_key(buf, n, what, secret, why, whylen);
        }
    }
    close(fd);
    return rc;
}

int vf_cfg_key_from_env(const char *name, char **secret, char *why, size_t whylen)
{
    char what[160];
    snprintf(what, sizeof what, "environment variable %s", name);
    const char *value = getenv(name);
    if (!value) {
        snprintf(why, whylen, "%s is not set", what);
        return -1;
    }
    size_t n = strnlen(value, VF_CFG_KEY_MAX + 3);
    if (n > VF_CFG_KEY_MAX + 2) {
        snprintf(why, whylen, "%s is longer than %u bytes", what, VF_CFG_KEY_MAX);
        return -1;
    }
    char *buf = malloc(n + 1);
    if (!buf) {
        snprintf(why, whylen, "%s: out of memory", what);
        return -1;
    }
    memcpy(buf, value, n + 1);
    return accept_key(buf, n, what, secret, why, whylen);
}

int vf_cfg_read_ca(const char *path, uint8_t **pem, size_t *len, bool *missing, char *why,
                   size_t whylen)
{
    *missing = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT) {
            *missing = true;
            return 0;
        }
        snprintf(why, whylen, "CA file %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int rc = -1;
    char *buf = NULL;
    size_t n = 0;
    if (fstat(fd, &st) != 0) {
        snprintf(why, whylen, "CA file %s: %s", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "CA file %s is not a regular file", path);
    } else if (read_all(fd, VF_CFG_CA_MAX, &buf, &n) != 0) {
        if (errno == EFBIG)
            snprintf(why, whylen, "CA file %s is larger than %u bytes", path, VF_CFG_CA_MAX);
        else
            snprintf(why, whylen, "CA file %s: %s", path, strerror(errno));
    } else if (!memmem(buf, n, "-----BEGIN CERTIFICATE-----", 27)) {
        snprintf(why, whylen, "CA file %s contains no PEM certificate", path);
        free(buf);
    } else {
        *pem = (uint8_t *)buf;
        *len = n;
        rc = 0;
    }
    close(fd);
    return rc;
}
