/* The directory that holds a client socket must not be someone else's.
 *
 * Without XDG_RUNTIME_DIR the default socket is /tmp/verifetch-<uid>/...;
 * /tmp is shared, so another local user can create that directory first and
 * then either stop the broker from starting or serve forged "verified"
 * answers to our clients. Rule: when the socket's directory sits inside a
 * world-writable directory (/tmp, /var/tmp, /dev/shm), it must be a real
 * directory (not a symlink), owned by the expected user, and not writable by
 * group or others. Elsewhere (/run, $XDG_RUNTIME_DIR) the parent is already
 * private and nothing is checked. */
#ifndef VERIFETCH_SOCKET_DIR_H
#define VERIFETCH_SOCKET_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Broker side: creates the directory (mkdir, then fchmod 0700 through the
 * descriptor) if absent, and verifies it with lstat and through an
 * O_NOFOLLOW descriptor: owned by the euid, no group/other write. An
 * existing directory's mode is not changed (a group may need to enter it).
 * 0 = fine; -1 with a message naming the directory and the problem. */
int vf_socket_dir_prepare(const char *socket_path, char *err, size_t errlen);

/* Client side (CLI, Python client): the same checks without creating or
 * changing anything; the directory may be owned by the caller's euid or by
 * root (a system broker). 0 = safe to connect; -1 with a message. */
int vf_socket_dir_check(const char *socket_path, char *err, size_t errlen);

#endif
