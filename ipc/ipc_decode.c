/* Decoding helpers: one msgpack value into one C field, and the strict walk
 * over a message map (ipc_decode.h). */
#include "ipc/ipc_decode.h"

#include <stdlib.h>
#include <string.h>

#include "ipc/ipc_limits.h"

vf_ipc_err ipc_dup_bytes(const void *src, size_t n, void **out)
{
    char *p = malloc(n + 1);
    if (p == NULL)
        return VF_IPC_ERR_NOMEM;
    if (n > 0)
        memcpy(p, src, n);
    p[n] = '\0';
    *out = p;
    return VF_IPC_OK;
}

/* A str obeying rule; nil gives NULL only when nil_ok. */
vf_ipc_err ipc_take_str(const msgpack_object *o, ipc_text_rule rule, bool nil_ok, char **out)
{
    if (o->type == MSGPACK_OBJECT_NIL && nil_ok) {
        *out = NULL;
        return VF_IPC_OK;
    }
    if (o->type != MSGPACK_OBJECT_STR)
        return VF_IPC_ERR_TYPE;
    vf_ipc_err err = rule(o->via.str.ptr, o->via.str.size);
    if (err != VF_IPC_OK)
        return err;
    void *copy;
    err = ipc_dup_bytes(o->via.str.ptr, o->via.str.size, &copy);
    if (err == VF_IPC_OK)
        *out = copy;
    return err;
}

vf_ipc_err ipc_take_str_array(const msgpack_object *o, size_t max, ipc_text_rule rule, char ***out,
                              size_t *n)
{
    if (o->type != MSGPACK_OBJECT_ARRAY)
        return VF_IPC_ERR_TYPE;
    const msgpack_object_array *arr = &o->via.array;
    if (arr->size > max)
        return VF_IPC_ERR_RANGE;
    /* Judge every item before allocating anything. */
    for (uint32_t i = 0; i < arr->size; i++) {
        if (arr->ptr[i].type != MSGPACK_OBJECT_STR)
            return VF_IPC_ERR_TYPE;
        vf_ipc_err err = rule(arr->ptr[i].via.str.ptr, arr->ptr[i].via.str.size);
        if (err != VF_IPC_OK)
            return err;
    }
    if (arr->size == 0)
        return VF_IPC_OK;
    *out = calloc(arr->size, sizeof **out);
    if (*out == NULL)
        return VF_IPC_ERR_NOMEM;
    for (uint32_t i = 0; i < arr->size; i++) {
        vf_ipc_err err = ipc_take_str(&arr->ptr[i], rule, false, &(*out)[i]);
        if (err != VF_IPC_OK)
            return err;
        *n = i + 1;
    }
    return VF_IPC_OK;
}

vf_ipc_err ipc_take_bin(const msgpack_object *o, size_t cap, uint8_t **out, size_t *out_len)
{
    if (o->type != MSGPACK_OBJECT_BIN)
        return VF_IPC_ERR_TYPE;
    if (o->via.bin.size > cap)
        return VF_IPC_ERR_RANGE;
    void *copy;
    vf_ipc_err err = ipc_dup_bytes(o->via.bin.ptr, o->via.bin.size, &copy);
    if (err == VF_IPC_OK) {
        *out = copy;
        *out_len = o->via.bin.size;
    }
    return err;
}

vf_ipc_err ipc_take_uint(const msgpack_object *o, uint64_t min, uint64_t max, uint64_t *out)
{
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        return VF_IPC_ERR_RANGE;
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return VF_IPC_ERR_TYPE;
    if (o->via.u64 < min || o->via.u64 > max)
        return VF_IPC_ERR_RANGE;
    *out = o->via.u64;
    return VF_IPC_OK;
}

vf_ipc_err ipc_take_bool(const msgpack_object *o, bool *out)
{
    if (o->type != MSGPACK_OBJECT_BOOLEAN)
        return VF_IPC_ERR_TYPE;
    *out = o->via.boolean;
    return VF_IPC_OK;
}

vf_ipc_err ipc_take_version(const msgpack_object *o)
{
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        return VF_IPC_ERR_VERSION;
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return VF_IPC_ERR_TYPE;
    return o->via.u64 == VF_IPC_VERSION ? VF_IPC_OK : VF_IPC_ERR_VERSION;
}

static bool key_is(const msgpack_object *k, const char *name)
{
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == strlen(name) &&
           memcmp(k->via.str.ptr, name, k->via.str.size) == 0;
}

/* The version decides what every other key means, so judge it first. */
vf_ipc_err ipc_check_version_first(const msgpack_object_map *map, const char **field)
{
    for (uint32_t i = 0; i < map->size; i++) {
        if (key_is(&map->ptr[i].key, "v")) {
            vf_ipc_err err = ipc_take_version(&map->ptr[i].val);
            if (err != VF_IPC_OK)
                *field = "v";
            return err;
        }
    }
    return VF_IPC_OK;
}

vf_ipc_err ipc_walk_map(const msgpack_object_map *map, const char *const *names,
                        size_t n_names, uint32_t *seen, ipc_field_setter set, void *out,
                        const char **field)
{
    *seen = 0;
    for (uint32_t i = 0; i < map->size; i++) {
        const msgpack_object *key = &map->ptr[i].key;
        if (key->type != MSGPACK_OBJECT_STR)
            return VF_IPC_ERR_TYPE;
        size_t slot = n_names;
        for (size_t s = 0; s < n_names; s++)
            if (key_is(key, names[s]))
                slot = s;
        if (slot == n_names)
            return VF_IPC_ERR_UNKNOWN_FIELD;
        *field = names[slot];
        if (*seen & (1u << slot))
            return VF_IPC_ERR_DUPLICATE;
        *seen |= 1u << slot;
        vf_ipc_err err = set(out, slot, &map->ptr[i].val);
        if (err != VF_IPC_OK)
            return err;
        *field = "";
    }
    return VF_IPC_OK;
}

vf_ipc_err ipc_require(uint32_t seen, const char *const *names, size_t n_names,
                       uint32_t required, const char **field)
{
    for (size_t s = 0; s < n_names; s++) {
        if ((required & (1u << s)) && !(seen & (1u << s))) {
            *field = names[s];
            return VF_IPC_ERR_MISSING;
        }
    }
    return VF_IPC_OK;
}
