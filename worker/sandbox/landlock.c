#include "worker/sandbox/landlock.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1u << 0)

/* Filesystem rights by the ABI that introduced them (kernel uapi values). */
#define LL_FS_ABI1  ((1ull << 13) - 1)  /* execute .. make_sym */
#define LL_FS_REFER (1ull << 13)        /* ABI 2 */
#define LL_FS_TRUNCATE (1ull << 14)     /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ull << 15)    /* ABI 5 */
#define LL_NET_BIND_CONNECT_TCP 0x3ull  /* ABI 4 */
#define LL_SCOPE_UNIX_SIGNAL 0x3ull     /* ABI 6: abstract unix sockets, signals */
/* ABI 7 added only audit-log flags. A newer ABI's new rights stay unhandled
 * (the kernel enforces what we name); the seccomp filter still stands. */

typedef struct {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
} ll_ruleset_attr;

int vf_landlock_abi(void)
{
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return v > 0 ? (int)v : 0;
}

int vf_landlock_forbid_all(char *err, size_t errlen)
{
    int abi = vf_landlock_abi();
    if (abi == 0)
        return 0;
    ll_ruleset_attr attr = { .handled_access_fs = LL_FS_ABI1 };
    size_t size = sizeof attr.handled_access_fs;
    if (abi >= 2)
        attr.handled_access_fs |= LL_FS_REFER;
    if (abi >= 3)
        attr.handled_access_fs |= LL_FS_TRUNCATE;
    if (abi >= 4) {
        attr.handled_access_net = LL_NET_BIND_CONNECT_TCP;
        size = offsetof(ll_ruleset_attr, scoped);
    }
    if (abi >= 5)
        attr.handled_access_fs |= LL_FS_IOCTL_DEV;
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_UNIX_SIGNAL;
        size = sizeof attr;
    }
    int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (fd < 0) {
        snprintf(err, errlen, "landlock_create_ruleset (ABI %d): %s", abi, strerror(errno));
        return -1;
    }
    long rc = syscall(SYS_landlock_restrict_self, fd, 0);
    int saved = errno;
    close(fd);
    if (rc != 0) {
        errno = saved;
        snprintf(err, errlen, "landlock_restrict_self (ABI %d): %s", abi, strerror(saved));
        return -1;
    }
    return 1;
}
