/* Landlock with an empty ruleset: the worker may open nothing at all, whatever
 * the filesystem says. Raw syscalls and our own constants, so an old
 * linux-libc-dev does not cap what a newer kernel can enforce. */
#ifndef VERIFETCH_WORKER_LANDLOCK_H
#define VERIFETCH_WORKER_LANDLOCK_H

#include <stddef.h>

/* Landlock ABI version of the running kernel; 0 when unavailable. */
int vf_landlock_abi(void);

/* Handles every access right the running ABI knows (filesystem, TCP bind and
 * connect, abstract-socket and signal scopes) with no rule granting any, and
 * restricts this process. 1: applied; 0: Landlock unavailable; -1: error
 * (err says why; errno EPERM means neither no_new_privs nor CAP_SYS_ADMIN). */
int vf_landlock_forbid_all(char *err, size_t errlen);

#endif
