/* Hand-built msgpack maps for the decoder tests: a valid base message with
 * chosen keys dropped and arbitrary (wrong-typed, duplicate, unknown) entries
 * appended, so every rejection can be provoked on purpose. */
#ifndef VERIFETCH_TESTS_HOSTILE_MSGPACK_H
#define VERIFETCH_TESTS_HOSTILE_MSGPACK_H

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { HV_UINT, HV_NEG, HV_STR, HV_BIN, HV_NIL, HV_BOOL, HV_FLOAT, HV_STR_ARRAY,
               HV_INT_ARRAY, HV_MAP } hv_kind;

typedef struct {
    const char *key;
    hv_kind kind;
    uint64_t u;                 /* HV_UINT, HV_BOOL (0/1), HV_INT_ARRAY (length) */
    int64_t i;                  /* HV_NEG */
    const char *s;              /* HV_STR / HV_BIN bytes */
    size_t n;                   /* their length; 0 means strlen(s) */
    const char *const *items;   /* HV_STR_ARRAY */
    size_t n_items;
} hv_entry;

#define HV_U(k, v)        { .key = (k), .kind = HV_UINT, .u = (v) }
#define HV_NEG_(k, v)     { .key = (k), .kind = HV_NEG, .i = (v) }
#define HV_S(k, v)        { .key = (k), .kind = HV_STR, .s = (v) }
#define HV_SN(k, v, len)  { .key = (k), .kind = HV_STR, .s = (v), .n = (len) }
#define HV_B(k, v, len)   { .key = (k), .kind = HV_BIN, .s = (v), .n = (len) }
#define HV_NIL_(k)        { .key = (k), .kind = HV_NIL }
#define HV_TRUE(k)        { .key = (k), .kind = HV_BOOL, .u = 1 }
#define HV_F(k)           { .key = (k), .kind = HV_FLOAT }
#define HV_SA(k, arr, cnt) { .key = (k), .kind = HV_STR_ARRAY, .items = (arr), .n_items = (cnt) }
#define HV_IA(k, cnt)     { .key = (k), .kind = HV_INT_ARRAY, .u = (cnt) }
#define HV_M(k)           { .key = (k), .kind = HV_MAP }

/* Packs into sb (initialised by the caller) one map holding every base entry
 * whose key differs from drop (NULL drops nothing), followed by the extras. */
void hv_build(msgpack_sbuffer *sb, const hv_entry *base, size_t n_base, const char *drop,
              const hv_entry *extra, size_t n_extra);

#endif
