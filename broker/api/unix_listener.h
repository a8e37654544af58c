/* Create the listening unix socket for the client API. */
#ifndef VERIFETCH_UNIX_LISTENER_H
#define VERIFETCH_UNIX_LISTENER_H

#include <stddef.h>
#include <sys/stat.h>

#define VF_UNIX_BACKLOG 1024
#define VF_UNIX_PROBE_MS 1000   /* start-up probe of an existing socket */

/* Creates missing parent directories (0755 for /run, 0700 elsewhere), removes
 * a stale socket file but refuses one a live process still answers on (the
 * probe never blocks longer than VF_UNIX_PROBE_MS). *bound gets the socket
 * file's identity (st_dev, st_ino): only that file is ours to remove. */
int vf_unix_listen(const char *path, unsigned mode, struct stat *bound, char *err, size_t errlen);

#endif
