#include "hostile_msgpack.h"

#include <string.h>

static void pack_str(msgpack_packer *pk, const char *s, size_t n)
{
    msgpack_pack_str(pk, n);
    if (n > 0)
        msgpack_pack_str_body(pk, s, n);
}

static void pack_value(msgpack_packer *pk, const hv_entry *e)
{
    size_t n = e->n != 0 || e->s == NULL ? e->n : strlen(e->s);
    switch (e->kind) {
    case HV_UINT: msgpack_pack_uint64(pk, e->u); break;
    case HV_NEG: msgpack_pack_int64(pk, e->i); break;
    case HV_STR: pack_str(pk, e->s, n); break;
    case HV_BIN:
        msgpack_pack_bin(pk, n);
        if (n > 0)
            msgpack_pack_bin_body(pk, e->s, n);
        break;
    case HV_NIL: msgpack_pack_nil(pk); break;
    case HV_BOOL: e->u ? msgpack_pack_true(pk) : msgpack_pack_false(pk); break;
    case HV_FLOAT: msgpack_pack_double(pk, 1.5); break;
    case HV_STR_ARRAY:
        msgpack_pack_array(pk, e->n_items);
        for (size_t i = 0; i < e->n_items; i++)
            pack_str(pk, e->items[i], strlen(e->items[i]));
        break;
    case HV_INT_ARRAY:
        msgpack_pack_array(pk, e->u);
        for (uint64_t i = 0; i < e->u; i++)
            msgpack_pack_uint64(pk, i);
        break;
    case HV_MAP: msgpack_pack_map(pk, 0); break;
    }
}

void hv_build(msgpack_sbuffer *sb, const hv_entry *base, size_t n_base, const char *drop,
              const hv_entry *extra, size_t n_extra)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    size_t kept = 0;
    for (size_t i = 0; i < n_base; i++)
        if (drop == NULL || strcmp(base[i].key, drop) != 0)
            kept++;
    msgpack_pack_map(&pk, kept + n_extra);
    for (size_t i = 0; i < n_base; i++) {
        if (drop != NULL && strcmp(base[i].key, drop) == 0)
            continue;
        pack_str(&pk, base[i].key, strlen(base[i].key));
        pack_value(&pk, &base[i]);
    }
    for (size_t i = 0; i < n_extra; i++) {
        pack_str(&pk, extra[i].key, strlen(extra[i].key));
        pack_value(&pk, &extra[i]);
    }
}
