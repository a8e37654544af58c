/* systemd socket activation (the sd_listen_fds protocol), without libsystemd. */
#ifndef VERIFETCH_SOCKET_ACTIVATION_H
#define VERIFETCH_SOCKET_ACTIVATION_H

#include <stddef.h>

/* The fd systemd passes first (SD_LISTEN_FDS_START). */
#define VF_LISTEN_FDS_START 3

/* Returns the inherited listening socket (always fd 3) when this process was
 * socket-activated with exactly one AF_UNIX SOCK_STREAM listening socket; the
 * fd is made close-on-exec so no worker inherits it.
 * Returns -1 when the process was not socket-activated (LISTEN_PID or
 * LISTEN_FDS absent, or LISTEN_PID names another process): start normally.
 * Returns -2 on a broken activation (malformed variables, not exactly one
 * fd, fd 3 not a listening unix stream socket) with err saying why: refuse
 * to start, because binding our own socket would silently bypass the unit.
 * In every case LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES are removed from
 * the environment so nothing started later mistakes them for its own. */
int vf_systemd_listen_fd(char *err, size_t errlen);

/* The filesystem path a listening unix socket is bound to, for logging and
 * for the broker's "listening on unix:<path>" line. 0 on success; -1 with
 * err when fd is not bound to a path (abstract or unnamed socket). */
int vf_unix_socket_path(int fd, char *path, size_t pathlen, char *err, size_t errlen);

#endif
