/* Broker <-> worker wire: one frame = 4-byte big-endian length + msgpack payload.
 * Every byte from the worker is hostile, so every read is capped and every
 * decode is strict (see ipc_messages.h). */
#ifndef VERIFETCH_IPC_FRAME_H
#define VERIFETCH_IPC_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* A job carries a CA bundle (Debian's is ~220 KiB), so allow 2 MiB. */
#define VF_IPC_MAX_JOB_FRAME (2u * 1024u * 1024u)
/* A result frame may carry up to the body cap plus this much metadata. */
#define VF_IPC_RESULT_OVERHEAD (64u * 1024u)

typedef enum {
    VF_IPC_OK = 0,
    VF_IPC_ERR_IO,            /* read/write/poll failed */
    VF_IPC_ERR_EOF,           /* peer closed before a complete frame */
    VF_IPC_ERR_TOO_LARGE,     /* length prefix above the caller's cap */
    VF_IPC_ERR_TIMEOUT,       /* deadline passed before a complete frame */
    VF_IPC_ERR_MSGPACK,       /* payload is not one valid msgpack object */
    VF_IPC_ERR_TRAILING,      /* bytes left after the top-level object */
    VF_IPC_ERR_TYPE,          /* top level not a map, or a field of the wrong type */
    VF_IPC_ERR_MISSING,       /* a required field is absent */
    VF_IPC_ERR_UNKNOWN_FIELD, /* a key this version does not define */
    VF_IPC_ERR_DUPLICATE,     /* the same key twice */
    VF_IPC_ERR_RANGE,         /* integer out of range, string/blob too long, NUL in string */
    VF_IPC_ERR_VERSION,       /* "v" is not VF_IPC_VERSION */
    VF_IPC_ERR_NOMEM,
    VF_IPC_ERR_FD,            /* expected a passed fd and got none, or got more than one */
} vf_ipc_err;

/* Stable short names ("too_large", "trailing_bytes", ...) used in receipt details. */
const char *vf_ipc_strerror(vf_ipc_err err);

/* Monotonic clock in milliseconds; deadlines below are absolute values of it. */
int64_t vf_now_ms(void);

/* Write one frame. If pass_fd >= 0 it travels with the first byte via SCM_RIGHTS.
 * Handles short writes and EINTR; never raises SIGPIPE (MSG_NOSIGNAL). */
vf_ipc_err vf_ipc_send_frame(int sock, const void *payload, size_t len, int pass_fd);

/* One frame whose payload is the parts back to back, sent without joining
 * them (a large text goes from where it lies). Empty parts are skipped. */
#define VF_IPC_MAX_PARTS 4
typedef struct {
    const void *data;
    size_t len;
} vf_ipc_part;
vf_ipc_err vf_ipc_send_frame_parts(int sock, const vf_ipc_part *parts, size_t n_parts, int pass_fd);

/* Read one frame of at most max_len payload bytes.
 * deadline_ms: absolute vf_now_ms() value, or -1 to wait forever.
 * received_fd: if non-NULL, receives a passed fd or -1; if NULL, any passed fd is
 * closed and the frame is rejected with VF_IPC_ERR_FD (a peer must not smuggle fds).
 * On success *payload is malloc'd (caller frees) and *len set. */
vf_ipc_err vf_ipc_recv_frame(int sock, size_t max_len, int64_t deadline_ms,
                             void **payload, size_t *len, int *received_fd);

/* Called once a frame's length is read and within max_len, before its
 * payload is allocated: VF_IPC_OK to go on, anything else ends the receive
 * with that error. */
typedef vf_ipc_err (*vf_ipc_gate)(size_t payload_len, void *ctx);

/* vf_ipc_recv_frame with a gate (NULL: none). */
vf_ipc_err vf_ipc_recv_frame_gated(int sock, size_t max_len, int64_t deadline_ms, vf_ipc_gate gate,
                                   void *gate_ctx, void **payload, size_t *len, int *received_fd);

#endif
