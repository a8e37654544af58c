/* msgpack encoding of vf_job and vf_result (ipc_messages.h).
 * The decoder is the broker's first contact with worker bytes, so it is strict
 * and bounded: the raw bytes are pre-scanned (depth, item count, lengths) before
 * msgpack-c builds any object, because msgpack-c allocates a container's slots
 * from its header count alone and a 5-byte input could ask for 64 GiB. */
#include "ipc/ipc_messages.h"

#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Our schema nests two deep (map -> headers array); anything much deeper or
 * larger is hostile. The item budget bounds msgpack-c's zone to ~32 KiB. */
#define MP_MAX_DEPTH 8u
#define MP_MAX_ITEMS 1024u

#define MAX_TIMEOUT_MS 600000u
#define MAX_BODY_LIMIT (256u * 1024u * 1024u)
#define MAX_HTTP_STATUS 999u

/* ------------------------------------------------------------------------ */
/* Pre-scan: walk exactly one msgpack object without building it.           */

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

/* Unpacks the single top-level map of buf into up. */
static vf_ipc_err unpack_top_map(const void *buf, size_t len, msgpack_unpacked *up,
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

/* ------------------------------------------------------------------------ */
/* Value rules shared by the encoder and the decoder.                        */

static vf_ipc_err check_text(const char *s, size_t n, size_t cap)
{
    if (n > cap || (n > 0 && memchr(s, '\0', n) != NULL))
        return VF_IPC_ERR_RANGE;
    return VF_IPC_OK;
}

static vf_ipc_err check_url(const char *s, size_t n)
{
    vf_ipc_err err = check_text(s, n, VF_IPC_MAX_URL);
    if (err != VF_IPC_OK)
        return err;
    bool http = n > 7 && strncasecmp(s, "http://", 7) == 0;
    bool https = n > 8 && strncasecmp(s, "https://", 8) == 0;
    return (http || https) ? VF_IPC_OK : VF_IPC_ERR_RANGE;
}

static vf_ipc_err check_ip(const char *s, size_t n)
{
    vf_ipc_err err = check_text(s, n, VF_IPC_MAX_IP);
    return (err == VF_IPC_OK && n == 0) ? VF_IPC_ERR_RANGE : err;
}

/* RFC 6901: the empty pointer, or a sequence of "/token". */
static vf_ipc_err check_pointer(const char *s, size_t n)
{
    vf_ipc_err err = check_text(s, n, VF_IPC_MAX_POINTER);
    if (err == VF_IPC_OK && n > 0 && s[0] != '/')
        err = VF_IPC_ERR_RANGE;
    return err;
}

/* Whole instructions only, and no empty program: the kernel would refuse it
 * anyway, but a truncated copy must never be mistaken for a smaller filter. */
static vf_ipc_err check_bpf_len(size_t n)
{
    if (n == 0 || n > VF_IPC_MAX_BPF || n % VF_IPC_BPF_INSN_BYTES != 0)
        return VF_IPC_ERR_RANGE;
    return VF_IPC_OK;
}

/* "Name: value" with no CR/LF, so a header can never split a request. */
static vf_ipc_err check_header_line(const char *s, size_t n)
{
    vf_ipc_err err = check_text(s, n, VF_IPC_MAX_HEADER_LINE);
    if (err != VF_IPC_OK)
        return err;
    if (memchr(s, '\r', n) != NULL || memchr(s, '\n', n) != NULL)
        return VF_IPC_ERR_RANGE;
    const char *colon = memchr(s, ':', n);
    return (colon == NULL || colon == s) ? VF_IPC_ERR_RANGE : VF_IPC_OK;
}

static vf_ipc_err check_terr(const char *s, size_t n)
{
    static const char *const codes[] = {
        "connect", "tls", "timeout", "too_large", "protocol", "decode", "internal",
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (strlen(codes[i]) == n && memcmp(codes[i], s, n) == 0)
            return VF_IPC_OK;
    return VF_IPC_ERR_RANGE;
}

static vf_ipc_err check_render(uint32_t render)
{
    bool both = (render & VF_RENDER_LINKS_NONE) && (render & VF_RENDER_LINKS_LIST);
    return (render & ~VF_RENDER_ALL) || both ? VF_IPC_ERR_RANGE : VF_IPC_OK;
}

typedef vf_ipc_err (*text_rule)(const char *s, size_t n);

static vf_ipc_err rule_short(const char *s, size_t n) { return check_text(s, n, VF_IPC_MAX_SHORT); }
static vf_ipc_err rule_detail(const char *s, size_t n) { return check_text(s, n, VF_IPC_MAX_DETAIL); }
/* A Location header may be relative, so only its size and NULs are judged. */
static vf_ipc_err rule_url_any(const char *s, size_t n) { return check_text(s, n, VF_IPC_MAX_URL); }

/* ------------------------------------------------------------------------ */
/* Decoding helpers: one msgpack value into one C field.                     */

static vf_ipc_err dup_bytes(const void *src, size_t n, void **out)
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
static vf_ipc_err take_str(const msgpack_object *o, text_rule rule, bool nil_ok, char **out)
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
    err = dup_bytes(o->via.str.ptr, o->via.str.size, &copy);
    if (err == VF_IPC_OK)
        *out = copy;
    return err;
}

static vf_ipc_err take_bin(const msgpack_object *o, size_t cap, uint8_t **out, size_t *out_len)
{
    if (o->type != MSGPACK_OBJECT_BIN)
        return VF_IPC_ERR_TYPE;
    if (o->via.bin.size > cap)
        return VF_IPC_ERR_RANGE;
    void *copy;
    vf_ipc_err err = dup_bytes(o->via.bin.ptr, o->via.bin.size, &copy);
    if (err == VF_IPC_OK) {
        *out = copy;
        *out_len = o->via.bin.size;
    }
    return err;
}

static vf_ipc_err take_uint(const msgpack_object *o, uint64_t min, uint64_t max, uint64_t *out)
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

static vf_ipc_err take_bool(const msgpack_object *o, bool *out)
{
    if (o->type != MSGPACK_OBJECT_BOOLEAN)
        return VF_IPC_ERR_TYPE;
    *out = o->via.boolean;
    return VF_IPC_OK;
}

static vf_ipc_err take_version(const msgpack_object *o)
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
static vf_ipc_err check_version_first(const msgpack_object_map *map, const char **field)
{
    for (uint32_t i = 0; i < map->size; i++) {
        if (key_is(&map->ptr[i].key, "v")) {
            vf_ipc_err err = take_version(&map->ptr[i].val);
            if (err != VF_IPC_OK)
                *field = "v";
            return err;
        }
    }
    return VF_IPC_OK;
}

/* Maps each key to its slot in names[]: unknown, non-string and repeated keys
 * are errors. Calls set() for every value; stops at the first failure. */
typedef vf_ipc_err (*field_setter)(void *out, size_t slot, const msgpack_object *val);

static vf_ipc_err walk_map(const msgpack_object_map *map, const char *const *names,
                           size_t n_names, uint32_t *seen, field_setter set, void *out,
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

static vf_ipc_err require(uint32_t seen, const char *const *names, size_t n_names,
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

/* ------------------------------------------------------------------------ */
/* vf_job                                                                     */

enum { J_V, J_URL, J_IP, J_PORT, J_TIMEOUT, J_MAX_BODY, J_CA, J_MODE, J_POINTER,
       J_HEADERS, J_HOOK, J_CA_PRELOADED, J_BPF, J_REQUIRE, J_RENDER, J_COUNT };
static const char *const job_keys[J_COUNT] = {
    "v", "url", "ip", "port", "timeout_ms", "max_body", "ca", "mode", "pointer",
    "headers", "hook", "ca_preloaded", "bpf", "require", "render",
};
#define JOB_REQUIRED ((1u << J_V) | (1u << J_URL) | (1u << J_IP) | (1u << J_PORT) | \
                      (1u << J_TIMEOUT) | (1u << J_MAX_BODY) | (1u << J_MODE))

static vf_ipc_err take_headers(const msgpack_object *o, vf_job *job)
{
    if (o->type != MSGPACK_OBJECT_ARRAY)
        return VF_IPC_ERR_TYPE;
    const msgpack_object_array *arr = &o->via.array;
    if (arr->size > VF_IPC_MAX_HEADERS)
        return VF_IPC_ERR_RANGE;
    for (uint32_t i = 0; i < arr->size; i++) {
        if (arr->ptr[i].type != MSGPACK_OBJECT_STR)
            return VF_IPC_ERR_TYPE;
        vf_ipc_err err = check_header_line(arr->ptr[i].via.str.ptr, arr->ptr[i].via.str.size);
        if (err != VF_IPC_OK)
            return err;
    }
    if (arr->size == 0)
        return VF_IPC_OK;
    job->headers = calloc(arr->size, sizeof *job->headers);
    if (job->headers == NULL)
        return VF_IPC_ERR_NOMEM;
    for (uint32_t i = 0; i < arr->size; i++) {
        void *copy;
        vf_ipc_err err = dup_bytes(arr->ptr[i].via.str.ptr, arr->ptr[i].via.str.size, &copy);
        if (err != VF_IPC_OK)
            return err;
        job->headers[i] = copy;
        job->n_headers = i + 1;
    }
    return VF_IPC_OK;
}

static vf_ipc_err set_job_field(void *out, size_t slot, const msgpack_object *val)
{
    vf_job *job = out;
    uint64_t u = 0;
    vf_ipc_err err;
    switch (slot) {
    case J_V:
        return take_version(val);
    case J_URL:
        return take_str(val, check_url, false, &job->url);
    case J_IP:
        return take_str(val, check_ip, false, &job->connect_ip);
    case J_PORT:
        err = take_uint(val, 1, 65535, &u);
        job->port = (uint16_t)u;
        return err;
    case J_TIMEOUT:
        err = take_uint(val, 1, MAX_TIMEOUT_MS, &u);
        job->timeout_ms = (uint32_t)u;
        return err;
    case J_MAX_BODY:
        return take_uint(val, 1, MAX_BODY_LIMIT, &job->max_body);
    case J_CA:
        return take_bin(val, VF_IPC_MAX_JOB_FRAME, &job->ca_pem, &job->ca_pem_len);
    case J_MODE:
        err = take_uint(val, VF_MODE_RAW, VF_MODE_JSON, &u);
        job->mode = (vf_response_mode)u;
        return err;
    case J_POINTER:
        return take_str(val, check_pointer, false, &job->json_pointer);
    case J_HEADERS:
        return take_headers(val, job);
    case J_HOOK:
        return take_str(val, rule_short, false, &job->test_hook);
    case J_CA_PRELOADED:
        return take_bool(val, &job->ca_preloaded);
    case J_BPF:
        err = take_bin(val, VF_IPC_MAX_BPF, &job->bpf, &job->bpf_len);
        return err == VF_IPC_OK ? check_bpf_len(job->bpf_len) : err;
    case J_REQUIRE:
        err = take_uint(val, 0, VF_LAYER_ALL, &u);
        job->required_layers = (uint32_t)u;
        return err;
    case J_RENDER:
        err = take_uint(val, 0, VF_RENDER_ALL, &u);
        job->render = (uint32_t)u;
        return err == VF_IPC_OK && check_render(job->render) != VF_IPC_OK ? VF_IPC_ERR_RANGE : err;
    }
    return VF_IPC_ERR_UNKNOWN_FIELD;
}

vf_ipc_err vf_job_decode(const void *buf, size_t len, vf_job *out, const char **field)
{
    const char *ignored;
    if (field == NULL)
        field = &ignored;
    *field = "";
    memset(out, 0, sizeof *out);

    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    const msgpack_object_map *map = NULL;
    uint32_t seen = 0;
    vf_ipc_err err = unpack_top_map(buf, len, &up, &map);
    if (err == VF_IPC_OK)
        err = check_version_first(map, field);
    if (err == VF_IPC_OK)
        err = walk_map(map, job_keys, J_COUNT, &seen, set_job_field, out, field);
    if (err == VF_IPC_OK)
        err = require(seen, job_keys, J_COUNT, JOB_REQUIRED, field);
    if (err == VF_IPC_OK && out->mode == VF_MODE_JSON && out->json_pointer == NULL) {
        *field = "pointer";
        err = VF_IPC_ERR_MISSING;
    }
    /* Two CA sources would leave the worker guessing which one it trusts. */
    if (err == VF_IPC_OK && out->ca_preloaded && out->ca_pem != NULL) {
        *field = "ca_preloaded";
        err = VF_IPC_ERR_RANGE;
    }
    msgpack_unpacked_destroy(&up);
    if (err != VF_IPC_OK)
        vf_job_free(out);
    return err;
}

void vf_job_free(vf_job *job)
{
    if (job == NULL)
        return;
    free(job->url);
    free(job->connect_ip);
    free(job->ca_pem);
    free(job->json_pointer);
    for (size_t i = 0; i < job->n_headers; i++)
        free(job->headers[i]);
    free(job->headers);
    free(job->test_hook);
    free(job->bpf);
    memset(job, 0, sizeof *job);
}

/* ------------------------------------------------------------------------ */
/* vf_result                                                                  */

enum { R_V, R_TERR, R_MALFORMED, R_DETAIL, R_STATUS, R_CTYPE, R_LOCATION, R_TEXT,
       R_BODY_BYTES, R_LAYERS, R_META, R_COUNT };
static const char *const result_keys[R_COUNT] = {
    "v", "terr", "malformed", "detail", "status", "ctype", "location", "text", "body_bytes",
    "layers", "meta",
};
#define RESULT_REQUIRED ((1u << R_V) | (1u << R_DETAIL) | (1u << R_STATUS) | \
                         (1u << R_TEXT) | (1u << R_BODY_BYTES))

typedef struct {
    vf_result *res;
    size_t max_text;
} result_target;

static vf_ipc_err set_result_field(void *out, size_t slot, const msgpack_object *val)
{
    result_target *t = out;
    vf_result *res = t->res;
    uint64_t u = 0;
    vf_ipc_err err;
    switch (slot) {
    case R_V:
        return take_version(val);
    case R_TERR:
        return take_str(val, check_terr, true, &res->transport_error);
    case R_MALFORMED:
        return take_str(val, rule_detail, true, &res->malformed);
    case R_DETAIL:
        return take_str(val, rule_detail, false, &res->detail);
    case R_STATUS:
        err = take_uint(val, 0, MAX_HTTP_STATUS, &u);
        res->http_status = (int32_t)u;
        return err;
    case R_CTYPE:
        return take_str(val, rule_short, true, &res->content_type);
    case R_LOCATION:
        return take_str(val, rule_url_any, true, &res->location);
    case R_TEXT:
        return take_bin(val, t->max_text, &res->text, &res->text_len);
    case R_BODY_BYTES:
        return take_uint(val, 0, UINT64_MAX, &res->body_bytes);
    case R_LAYERS:
        err = take_uint(val, 0, VF_LAYER_ALL, &u);
        res->layers = (uint32_t)u;
        return err;
    case R_META:
        return vf_page_meta_unpack(val, &res->meta, NULL);
    }
    return VF_IPC_ERR_UNKNOWN_FIELD;
}

vf_ipc_err vf_result_decode(const void *buf, size_t len, size_t max_text,
                            vf_result *out, const char **field)
{
    const char *ignored;
    if (field == NULL)
        field = &ignored;
    *field = "";
    memset(out, 0, sizeof *out);

    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    const msgpack_object_map *map = NULL;
    uint32_t seen = 0;
    result_target target = { .res = out, .max_text = max_text };
    vf_ipc_err err = unpack_top_map(buf, len, &up, &map);
    if (err == VF_IPC_OK)
        err = check_version_first(map, field);
    if (err == VF_IPC_OK)
        err = walk_map(map, result_keys, R_COUNT, &seen, set_result_field, &target, field);
    if (err == VF_IPC_OK)
        err = require(seen, result_keys, R_COUNT, RESULT_REQUIRED, field);
    msgpack_unpacked_destroy(&up);
    if (err != VF_IPC_OK)
        vf_result_free(out);
    return err;
}

void vf_result_free(vf_result *res)
{
    if (res == NULL)
        return;
    free(res->transport_error);
    free(res->malformed);
    free(res->detail);
    free(res->content_type);
    free(res->location);
    free(res->text);
    vf_page_meta_destroy(res->meta);
    memset(res, 0, sizeof *res);
}

/* ------------------------------------------------------------------------ */
/* Encoding                                                                   */

typedef struct {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    bool failed;
} encoder;

static void enc_init(encoder *e)
{
    msgpack_sbuffer_init(&e->sb);
    msgpack_packer_init(&e->pk, &e->sb, msgpack_sbuffer_write);
    e->failed = false;
}

static void enc_check(encoder *e, int rc)
{
    if (rc != 0)
        e->failed = true;
}

static void put_str(encoder *e, const char *s, size_t n)
{
    enc_check(e, msgpack_pack_str(&e->pk, n));
    if (n > 0)
        enc_check(e, msgpack_pack_str_body(&e->pk, s, n));
}

static void put_key(encoder *e, const char *key) { put_str(e, key, strlen(key)); }

static void put_uint(encoder *e, const char *key, uint64_t v)
{
    put_key(e, key);
    enc_check(e, msgpack_pack_uint64(&e->pk, v));
}

static void put_text(encoder *e, const char *key, const char *s)
{
    put_key(e, key);
    put_str(e, s, strlen(s));
}

static void put_bin(encoder *e, const char *key, const void *p, size_t n)
{
    put_key(e, key);
    enc_check(e, msgpack_pack_bin(&e->pk, n));
    if (n > 0)
        enc_check(e, msgpack_pack_bin_body(&e->pk, p, n));
}

/* Hands the buffer to the caller, or frees it when packing failed or the
 * message outgrew max_len. */
static vf_ipc_err enc_finish(encoder *e, size_t max_len, void **buf, size_t *len)
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

static vf_ipc_err check_cstr(const char *s, text_rule rule, bool nullable)
{
    if (s == NULL)
        return nullable ? VF_IPC_OK : VF_IPC_ERR_RANGE;
    return rule(s, strlen(s));
}

static vf_ipc_err check_job(const vf_job *job)
{
    vf_ipc_err err;
    if ((err = check_cstr(job->url, check_url, false)) != VF_IPC_OK ||
        (err = check_cstr(job->connect_ip, check_ip, false)) != VF_IPC_OK ||
        (err = check_cstr(job->json_pointer, check_pointer, true)) != VF_IPC_OK ||
        (err = check_cstr(job->test_hook, rule_short, true)) != VF_IPC_OK)
        return err;
    if (job->port == 0 || job->timeout_ms == 0 || job->timeout_ms > MAX_TIMEOUT_MS ||
        job->max_body == 0 || job->max_body > MAX_BODY_LIMIT)
        return VF_IPC_ERR_RANGE;
    if (job->mode != VF_MODE_RAW && job->mode != VF_MODE_JSON)
        return VF_IPC_ERR_RANGE;
    if (job->mode == VF_MODE_JSON && job->json_pointer == NULL)
        return VF_IPC_ERR_RANGE;
    if (job->ca_pem == NULL && job->ca_pem_len > 0)
        return VF_IPC_ERR_RANGE;
    if (job->ca_preloaded && job->ca_pem != NULL)
        return VF_IPC_ERR_RANGE;
    if ((job->bpf != NULL || job->bpf_len > 0) &&
        (job->bpf == NULL || check_bpf_len(job->bpf_len) != VF_IPC_OK))
        return VF_IPC_ERR_RANGE;
    if (job->required_layers & ~VF_LAYER_ALL || check_render(job->render) != VF_IPC_OK)
        return VF_IPC_ERR_RANGE;
    if (job->n_headers > VF_IPC_MAX_HEADERS || (job->n_headers > 0 && job->headers == NULL))
        return VF_IPC_ERR_RANGE;
    for (size_t i = 0; i < job->n_headers; i++) {
        if (job->headers[i] == NULL)
            return VF_IPC_ERR_RANGE;
        err = check_header_line(job->headers[i], strlen(job->headers[i]));
        if (err != VF_IPC_OK)
            return err;
    }
    return VF_IPC_OK;
}

vf_ipc_err vf_job_encode(const vf_job *job, void **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    vf_ipc_err err = check_job(job);
    if (err != VF_IPC_OK)
        return err;

    uint32_t n_keys = 7 + (job->ca_pem != NULL) + (job->json_pointer != NULL) +
                      (job->n_headers > 0) + (job->test_hook != NULL) + job->ca_preloaded +
                      (job->bpf != NULL) + (job->required_layers != 0) + (job->render != 0);
    encoder e;
    enc_init(&e);
    enc_check(&e, msgpack_pack_map(&e.pk, n_keys));
    put_uint(&e, "v", VF_IPC_VERSION);
    put_text(&e, "url", job->url);
    put_text(&e, "ip", job->connect_ip);
    put_uint(&e, "port", job->port);
    put_uint(&e, "timeout_ms", job->timeout_ms);
    put_uint(&e, "max_body", job->max_body);
    if (job->ca_pem != NULL)
        put_bin(&e, "ca", job->ca_pem, job->ca_pem_len);
    put_uint(&e, "mode", (uint64_t)job->mode);
    if (job->json_pointer != NULL)
        put_text(&e, "pointer", job->json_pointer);
    if (job->n_headers > 0) {
        put_key(&e, "headers");
        enc_check(&e, msgpack_pack_array(&e.pk, job->n_headers));
        for (size_t i = 0; i < job->n_headers; i++)
            put_str(&e, job->headers[i], strlen(job->headers[i]));
    }
    if (job->test_hook != NULL)
        put_text(&e, "hook", job->test_hook);
    if (job->ca_preloaded) {
        put_key(&e, "ca_preloaded");
        enc_check(&e, msgpack_pack_true(&e.pk));
    }
    if (job->bpf != NULL)
        put_bin(&e, "bpf", job->bpf, job->bpf_len);
    if (job->required_layers != 0)
        put_uint(&e, "require", job->required_layers);
    if (job->render != 0)
        put_uint(&e, "render", job->render);
    return enc_finish(&e, VF_IPC_MAX_JOB_FRAME, buf, len);
}

static vf_ipc_err check_result(const vf_result *res)
{
    vf_ipc_err err;
    if ((err = check_cstr(res->transport_error, check_terr, true)) != VF_IPC_OK ||
        (err = check_cstr(res->malformed, rule_detail, true)) != VF_IPC_OK ||
        (err = check_cstr(res->detail, rule_detail, true)) != VF_IPC_OK ||
        (err = check_cstr(res->content_type, rule_short, true)) != VF_IPC_OK ||
        (err = check_cstr(res->location, rule_url_any, true)) != VF_IPC_OK)
        return err;
    if (res->http_status < 0 || res->http_status > (int32_t)MAX_HTTP_STATUS)
        return VF_IPC_ERR_RANGE;
    if (res->text_len > MAX_BODY_LIMIT || (res->text == NULL && res->text_len > 0))
        return VF_IPC_ERR_RANGE;
    if (res->layers & ~VF_LAYER_ALL)
        return VF_IPC_ERR_RANGE;
    return res->meta != NULL ? vf_page_meta_check(res->meta) : VF_IPC_OK;
}

vf_ipc_err vf_result_encode(const vf_result *res, void **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    vf_ipc_err err = check_result(res);
    if (err != VF_IPC_OK)
        return err;

    uint32_t n_keys = 5 + (res->transport_error != NULL) + (res->malformed != NULL) +
                      (res->content_type != NULL) + (res->location != NULL) + (res->layers != 0) +
                      (res->meta != NULL);
    encoder e;
    enc_init(&e);
    enc_check(&e, msgpack_pack_map(&e.pk, n_keys));
    put_uint(&e, "v", VF_IPC_VERSION);
    if (res->transport_error != NULL)
        put_text(&e, "terr", res->transport_error);
    if (res->malformed != NULL)
        put_text(&e, "malformed", res->malformed);
    /* detail is required on the wire; a NULL one means "nothing to add". */
    put_text(&e, "detail", res->detail != NULL ? res->detail : "");
    put_uint(&e, "status", (uint64_t)res->http_status);
    if (res->content_type != NULL)
        put_text(&e, "ctype", res->content_type);
    if (res->location != NULL)
        put_text(&e, "location", res->location);
    put_bin(&e, "text", res->text, res->text_len);
    put_uint(&e, "body_bytes", res->body_bytes);
    if (res->layers != 0)
        put_uint(&e, "layers", res->layers);
    if (res->meta != NULL) {
        put_key(&e, "meta");
        if (vf_page_meta_pack(&e.pk, res->meta) != VF_IPC_OK)
            e.failed = true;
    }
    return enc_finish(&e, (size_t)MAX_BODY_LIMIT + VF_IPC_RESULT_OVERHEAD, buf, len);
}

/* ------------------------------------------------------------------------ */
/* Confinement layer names                                                    */

static const char *const layer_names[VF_LAYER_COUNT] = {
    "rlimits", "uid", "userns", "pidns", "netns", "ipcns", "mntns", "landlock", "nnp", "seccomp",
};

const char *vf_layer_name(uint32_t bit)
{
    for (uint32_t i = 0; i < VF_LAYER_COUNT; i++)
        if (bit == (1u << i))
            return layer_names[i];
    return NULL;
}

void vf_layers_describe(uint32_t mask, char *buf, size_t len)
{
    if (len == 0)
        return;
    buf[0] = '\0';
    size_t used = 0;
    for (uint32_t i = 0; i < VF_LAYER_COUNT; i++) {
        if (!(mask & (1u << i)))
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", layer_names[i]);
        if (n < 0 || (size_t)n >= len - used) {
            buf[used] = '\0'; /* whole names only */
            return;
        }
        used += (size_t)n;
    }
}
