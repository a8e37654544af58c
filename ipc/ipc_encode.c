/* msgpack packing helpers for the IPC messages (ipc_encode.h). */
#include "ipc/ipc_encode.h"

#include <string.h>

void ipc_enc_init(ipc_encoder *e)
{
    msgpack_sbuffer_init(&e->sb);
    msgpack_packer_init(&e->pk, &e->sb, msgpack_sbuffer_write);
    e->failed = false;
}

void ipc_enc_check(ipc_encoder *e, int rc)
{
    if (rc != 0)
        e->failed = true;
}

void ipc_put_str(ipc_encoder *e, const char *s, size_t n)
{
    ipc_enc_check(e, msgpack_pack_str(&e->pk, n));
    if (n > 0)
        ipc_enc_check(e, msgpack_pack_str_body(&e->pk, s, n));
}

void ipc_put_key(ipc_encoder *e, const char *key) { ipc_put_str(e, key, strlen(key)); }

void ipc_put_uint(ipc_encoder *e, const char *key, uint64_t v)
{
    ipc_put_key(e, key);
    ipc_enc_check(e, msgpack_pack_uint64(&e->pk, v));
}

void ipc_put_text(ipc_encoder *e, const char *key, const char *s)
{
    ipc_put_key(e, key);
    ipc_put_str(e, s, strlen(s));
}

void ipc_put_bin(ipc_encoder *e, const char *key, const void *p, size_t n)
{
    ipc_put_key(e, key);
    ipc_enc_check(e, msgpack_pack_bin(&e->pk, n));
    if (n > 0)
        ipc_enc_check(e, msgpack_pack_bin_body(&e->pk, p, n));
}

/* Hands the buffer to the caller, or frees it when packing failed or the
 * message outgrew max_len. */
vf_ipc_err ipc_enc_finish(ipc_encoder *e, size_t max_len, void **buf, size_t *len)
{
    if (e->failed) {
        msgpack_sbuffer_destroy(&e->sb);
        return VF_IPC_ERR_NOMEM;
    }
    if (e->sb.size > max_len) {
        msgpack_sbuffer_destroy(&e->sb);
        return VF_IPC_ERR_RANGE;
    }
    *len = e->sb.size;
    *buf = msgpack_sbuffer_release(&e->sb);
    return VF_IPC_OK;
}
