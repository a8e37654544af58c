/* Create the listening unix socket for the client API. */
#ifndef VERIFETCH_UNIX_LISTENER_H
#define VERIFETCH_UNIX_LISTENER_H

#include <stddef.h>

/* Creates missing parent directories (0755 for /run, 0700 elsewhere), removes
 * a stale socket file but refuses one a live process still answers on. */
int vf_unix_listen(const char *path, unsigned mode, char *err, size_t errlen);

#endif
