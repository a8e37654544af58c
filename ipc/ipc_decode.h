/* Strict decoding of one message map: each helper takes one msgpack value into
 * one C field (checking type, range and the field's rule, copying bytes), and
 * ipc_walk_map() visits every key exactly once (ipc_decode.c). */
#ifndef VERIFETCH_IPC_DECODE_H
#define VERIFETCH_IPC_DECODE_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc_frame.h"
#include "ipc/ipc_rules.h"

/* malloc'd copy of n bytes plus a NUL. */
vf_ipc_err ipc_dup_bytes(const void *src, size_t n, void **out);
/* A str obeying rule; nil gives NULL only when nil_ok. */
vf_ipc_err ipc_take_str(const msgpack_object *o, ipc_text_rule rule, bool nil_ok, char **out);
/* An array of at most max str items, each obeying rule, copied into a
 * calloc'd array; *n counts the items copied so far (for freeing on error).
 * An empty array leaves *out NULL. */
vf_ipc_err ipc_take_str_array(const msgpack_object *o, size_t max, ipc_text_rule rule, char ***out,
                              size_t *n);
vf_ipc_err ipc_take_bin(const msgpack_object *o, size_t cap, uint8_t **out, size_t *out_len);
vf_ipc_err ipc_take_uint(const msgpack_object *o, uint64_t min, uint64_t max, uint64_t *out);
vf_ipc_err ipc_take_bool(const msgpack_object *o, bool *out);
/* "v" must be VF_IPC_VERSION. */
vf_ipc_err ipc_take_version(const msgpack_object *o);

/* The version decides what every other key means, so it is judged first. */
vf_ipc_err ipc_check_version_first(const msgpack_object_map *map, const char **field);

/* Maps each key to its slot in names[]: unknown, non-string and repeated keys
 * are errors. Calls set() for every value; stops at the first failure, with
 * *field naming the key. *seen gets one bit per slot present. */
typedef vf_ipc_err (*ipc_field_setter)(void *out, size_t slot, const msgpack_object *val);
vf_ipc_err ipc_walk_map(const msgpack_object_map *map, const char *const *names,
                        size_t n_names, uint32_t *seen, ipc_field_setter set, void *out,
                        const char **field);

/* MISSING, naming the first slot in required that seen lacks. */
vf_ipc_err ipc_require(uint32_t seen, const char *const *names, size_t n_names,
                       uint32_t required, const char **field);

#endif
