/* msgpack packing for the IPC messages. Every put_* records a failure in the
 * encoder instead of returning it, so a message is written straight through
 * and judged once by ipc_enc_finish() (ipc_encode.c). */
#ifndef VERIFETCH_IPC_ENCODE_H
#define VERIFETCH_IPC_ENCODE_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc_frame.h"

typedef struct {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    bool failed;
} ipc_encoder;

void ipc_enc_init(ipc_encoder *e);
void ipc_enc_check(ipc_encoder *e, int rc);   /* remembers a non-zero msgpack rc */
void ipc_put_str(ipc_encoder *e, const char *s, size_t n);
void ipc_put_key(ipc_encoder *e, const char *key);
void ipc_put_uint(ipc_encoder *e, const char *key, uint64_t v);
void ipc_put_text(ipc_encoder *e, const char *key, const char *s);
void ipc_put_bin(ipc_encoder *e, const char *key, const void *p, size_t n);
/* Hands the buffer to the caller, or frees it when packing failed (NOMEM) or
 * the message outgrew max_len (RANGE). */
vf_ipc_err ipc_enc_finish(ipc_encoder *e, size_t max_len, void **buf, size_t *len);

#endif
