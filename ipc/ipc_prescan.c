/* Pre-scan: walk exactly one msgpack object without building it.
 * The decoder is the broker's first contact with worker bytes, so the raw bytes
 * are checked (depth, item count, lengths) before msgpack-c builds any object,
 * because msgpack-c allocates a container's slots from its header count alone
 * and a 5-byte input could ask for 64 GiB. */
#include "ipc/ipc_prescan.h"

#include <stdbool.h>
#include <stdint.h>

/* Our schema nests two deep (map -> headers array); anything much deeper or
 * larger is hostile. The item budget bounds msgpack-c's zone to ~32 KiB. */
#define MP_MAX_DEPTH 8u
#define MP_MAX_ITEMS 1024u

typedef struct {
    const uint8_t *p;
    size_t len;
    size_t pos;
} cursor;

static bool take(cursor *c, size_t n, uint64_t *be_value)
{
    if (c->len - c->pos < n)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | c->p[c->pos + i];
    c->pos += n;
    if (be_value != NULL)
        *be_value = v;
    return true;
}

static bool skip(cursor *c, uint64_t n)
{
    if (n > c->len - c->pos)
        return false;
    c->pos += (size_t)n;
    return true;
}

/* Reads one item header. Containers report their element count in *children
 * (a map counts keys and values); scalars and blobs are skipped whole. */
static vf_ipc_err scan_item(cursor *c, uint64_t *children)
{
    uint64_t b, n;
    *children = 0;
    if (!take(c, 1, &b))
        return VF_IPC_ERR_MSGPACK;
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
        return VF_IPC_OK;
    if (b >= 0x80 && b <= 0x8f) {
        *children = 2 * (b & 0x0f);
        return VF_IPC_OK;
    }
    if (b >= 0x90 && b <= 0x9f) {
        *children = b & 0x0f;
        return VF_IPC_OK;
    }
    if (b >= 0xa0 && b <= 0xbf)
        return skip(c, b & 0x1f) ? VF_IPC_OK : VF_IPC_ERR_MSGPACK;

    bool ok;
    switch (b) {
    case 0xc4: case 0xd9: ok = take(c, 1, &n) && skip(c, n); break;   /* bin8, str8 */
    case 0xc5: case 0xda: ok = take(c, 2, &n) && skip(c, n); break;   /* bin16, str16 */
    case 0xc6: case 0xdb: ok = take(c, 4, &n) && skip(c, n); break;   /* bin32, str32 */
    case 0xc7: ok = take(c, 1, &n) && skip(c, 1 + n); break;          /* ext8 */
    case 0xc8: ok = take(c, 2, &n) && skip(c, 1 + n); break;          /* ext16 */
    case 0xc9: ok = take(c, 4, &n) && skip(c, 1 + n); break;          /* ext32 */
    case 0xca: ok = skip(c, 4); break;                                /* float32 */
    case 0xcb: ok = skip(c, 8); break;                                /* float64 */
    case 0xcc: case 0xd0: ok = skip(c, 1); break;
    case 0xcd: case 0xd1: ok = skip(c, 2); break;
    case 0xce: case 0xd2: ok = skip(c, 4); break;
    case 0xcf: case 0xd3: ok = skip(c, 8); break;
    case 0xd4: ok = skip(c, 2); break;                                /* fixext 1..16 */
    case 0xd5: ok = skip(c, 3); break;
    case 0xd6: ok = skip(c, 5); break;
    case 0xd7: ok = skip(c, 9); break;
    case 0xd8: ok = skip(c, 17); break;
    case 0xdc: ok = take(c, 2, children); break;                      /* array16 */
    case 0xdd: ok = take(c, 4, children); break;                      /* array32 */
    case 0xde: ok = take(c, 2, children); *children *= 2; break;      /* map16 */
    case 0xdf: ok = take(c, 4, children); *children *= 2; break;      /* map32 */
    default: ok = false; break;                                       /* 0xc1 */
    }
    return ok ? VF_IPC_OK : VF_IPC_ERR_MSGPACK;
}

/* Checks that buf starts with one complete object that msgpack-c can build
 * cheaply; *end is where it stops. Iterative, so nesting costs no C stack. */
static vf_ipc_err scan_object(const void *buf, size_t len, size_t *end)
{
    cursor c = { .p = buf, .len = len, .pos = 0 };
    uint64_t left[MP_MAX_DEPTH + 1];
    size_t depth = 0;
    uint64_t items = 0;
    left[0] = 1;
    for (;;) {
        while (left[depth] == 0) {
            if (depth == 0) {
                *end = c.pos;
                return VF_IPC_OK;
            }
            depth--;
        }
        left[depth]--;
        uint64_t children;
        vf_ipc_err err = scan_item(&c, &children);
        if (err != VF_IPC_OK)
            return err;
        if (children == 0)
            continue;
        /* Every child needs at least one byte: a count beyond what is left is a lie. */
        if (children > c.len - c.pos)
            return VF_IPC_ERR_MSGPACK;
        items += children;
        if (items > MP_MAX_ITEMS || depth == MP_MAX_DEPTH)
            return VF_IPC_ERR_RANGE;
        left[++depth] = children;
    }
}

vf_ipc_err ipc_unpack_top_map(const void *buf, size_t len, msgpack_unpacked *up,
                              const msgpack_object_map **map)
{
    size_t end = 0;
    vf_ipc_err err = scan_object(buf, len, &end);
    if (err != VF_IPC_OK)
        return err;
    size_t off = 0;
    msgpack_unpack_return r = msgpack_unpack_next(up, buf, len, &off);
    if (r == MSGPACK_UNPACK_NOMEM_ERROR)
        return VF_IPC_ERR_NOMEM;
    if (r != MSGPACK_UNPACK_SUCCESS || off != end)
        return VF_IPC_ERR_MSGPACK;
    if (up->data.type != MSGPACK_OBJECT_MAP)
        return VF_IPC_ERR_TYPE;
    if (off != len)
        return VF_IPC_ERR_TRAILING;
    *map = &up->data.via.map;
    return VF_IPC_OK;
}
