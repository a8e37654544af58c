/* The strict front door of every IPC decode: bytes are pre-scanned for depth,
 * item count and lengths before msgpack-c builds anything (ipc_prescan.c). */
#ifndef VERIFETCH_IPC_PRESCAN_H
#define VERIFETCH_IPC_PRESCAN_H

#include <msgpack.h>
#include <stddef.h>

#include "ipc/ipc_frame.h"

/* Unpacks the single top-level map of buf into up (caller inits and destroys
 * up). Errors: MSGPACK (malformed or a count that lies), RANGE (too deep or too
 * many items), TYPE (top level not a map), TRAILING (bytes after it), NOMEM. */
vf_ipc_err ipc_unpack_top_map(const void *buf, size_t len, msgpack_unpacked *up,
                              const msgpack_object_map **map);

#endif
