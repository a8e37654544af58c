/* msgpack form of vf_page_meta (ipc_page_meta.h). The outer decoder has
 * already bounded depth and item count; this file judges the map itself. */
#include "ipc/ipc_page_meta.h"

#include <stdlib.h>
#include <string.h>

#include "ipc/ipc_decode.h"
#include "ipc/ipc_rules.h"

enum { M_TITLE, M_H1, M_LANG, M_CANONICAL, M_DESCRIPTION, M_PUBLISHED, M_CHARSET, M_EXTRACT,
       M_PAGE_CHARS, M_MAIN_CHARS, M_PASSWORD, M_SIGNALS, M_COUNT };
static const char *const meta_keys[M_COUNT] = {
    "title", "h1", "lang", "canonical_url", "description", "published", "charset", "extract",
    "page_chars", "main_chars", "password_field", "signals",
};

/* Strict UTF-8: no overlongs, no surrogates, nothing above U+10FFFF. */
static bool utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        uint32_t cp, min;
        if (c >= 0xC2 && c <= 0xDF) { need = 1; cp = c & 0x1F; min = 0x80; }
        else if (c >= 0xE0 && c <= 0xEF) { need = 2; cp = c & 0x0F; min = 0x800; }
        else if (c >= 0xF0 && c <= 0xF4) { need = 3; cp = c & 0x07; min = 0x10000; }
        else return false;
        if (n - i - 1 < need)
            return false;
        for (size_t k = 1; k <= need; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += need + 1;
    }
    return true;
}

static vf_ipc_err check_str(const char *s, size_t n, size_t cap)
{
    vf_ipc_err err = ipc_check_text(s, n, cap);
    if (err == VF_IPC_OK && !utf8_valid((const unsigned char *)s, n))
        err = VF_IPC_ERR_RANGE;
    return err;
}

/* Signals are machine tokens: printable ASCII without blanks, never empty. */
static vf_ipc_err check_signal(const char *s, size_t n)
{
    if (n == 0 || n > VF_META_MAX_TOKEN)
        return VF_IPC_ERR_RANGE;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7F)
            return VF_IPC_ERR_RANGE;
    return VF_IPC_OK;
}

static vf_ipc_err check_extract(const char *s, size_t n)
{
    if ((n == 4 && memcmp(s, "main", 4) == 0) || (n == 4 && memcmp(s, "page", 4) == 0))
        return VF_IPC_OK;
    return VF_IPC_ERR_RANGE;
}

static size_t cap_of(size_t slot)
{
    switch (slot) {
    case M_TITLE: case M_H1: return VF_META_MAX_TITLE;
    case M_DESCRIPTION: return VF_META_MAX_DESCRIPTION;
    case M_CANONICAL: return VF_META_MAX_URL;
    default: return VF_META_MAX_TOKEN;
    }
}

static char **str_slot(vf_page_meta *m, size_t slot)
{
    switch (slot) {
    case M_TITLE: return &m->title;
    case M_H1: return &m->h1;
    case M_LANG: return &m->lang;
    case M_CANONICAL: return &m->canonical_url;
    case M_DESCRIPTION: return &m->description;
    case M_PUBLISHED: return &m->published;
    case M_CHARSET: return &m->charset;
    case M_EXTRACT: return &m->extract;
    default: return NULL;
    }
}

static vf_ipc_err check_slot_str(size_t slot, const char *s, size_t n)
{
    vf_ipc_err err = check_str(s, n, cap_of(slot));
    if (err == VF_IPC_OK && slot == M_EXTRACT)
        err = check_extract(s, n);
    return err;
}

vf_ipc_err vf_page_meta_check(const vf_page_meta *m)
{
    vf_page_meta *mm = (vf_page_meta *)m; /* str_slot only reads through it here */
    for (size_t slot = 0; slot < M_COUNT; slot++) {
        char **p = str_slot(mm, slot);
        if (p == NULL || *p == NULL)
            continue;
        vf_ipc_err err = check_slot_str(slot, *p, strlen(*p));
        if (err != VF_IPC_OK)
            return err;
    }
    if (m->n_signals > VF_META_MAX_SIGNALS || (m->n_signals > 0 && m->signals == NULL))
        return VF_IPC_ERR_RANGE;
    for (size_t i = 0; i < m->n_signals; i++)
        if (m->signals[i] == NULL || check_signal(m->signals[i], strlen(m->signals[i])) != VF_IPC_OK)
            return VF_IPC_ERR_RANGE;
    return VF_IPC_OK;
}

static int pack_cstr(msgpack_packer *pk, const char *s)
{
    size_t n = strlen(s);
    int rc = msgpack_pack_str(pk, n);
    return rc != 0 || n == 0 ? rc : msgpack_pack_str_body(pk, s, n);
}

vf_ipc_err vf_page_meta_pack(msgpack_packer *pk, const vf_page_meta *m)
{
    vf_ipc_err err = vf_page_meta_check(m);
    if (err != VF_IPC_OK)
        return err;
    vf_page_meta *mm = (vf_page_meta *)m;
    uint32_t n = 3 + (m->n_signals > 0); /* page_chars, main_chars, password_field */
    for (size_t slot = 0; slot < M_COUNT; slot++) {
        char **p = str_slot(mm, slot);
        n += p != NULL && *p != NULL;
    }
    int rc = msgpack_pack_map(pk, n);
    for (size_t slot = 0; slot < M_COUNT && rc == 0; slot++) {
        char **p = str_slot(mm, slot);
        if (p == NULL || *p == NULL)
            continue;
        rc = pack_cstr(pk, meta_keys[slot]);
        if (rc == 0)
            rc = pack_cstr(pk, *p);
    }
    if (rc == 0 && (rc = pack_cstr(pk, meta_keys[M_PAGE_CHARS])) == 0)
        rc = msgpack_pack_uint64(pk, m->page_chars);
    if (rc == 0 && (rc = pack_cstr(pk, meta_keys[M_MAIN_CHARS])) == 0)
        rc = msgpack_pack_uint64(pk, m->main_chars);
    if (rc == 0 && (rc = pack_cstr(pk, meta_keys[M_PASSWORD])) == 0)
        rc = m->password_field ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
    if (rc == 0 && m->n_signals > 0 && (rc = pack_cstr(pk, meta_keys[M_SIGNALS])) == 0) {
        rc = msgpack_pack_array(pk, m->n_signals);
        for (size_t i = 0; i < m->n_signals && rc == 0; i++)
            rc = pack_cstr(pk, m->signals[i]);
    }
    return rc == 0 ? VF_IPC_OK : VF_IPC_ERR_NOMEM;
}

static vf_ipc_err set_field(void *out, size_t slot, const msgpack_object *v)
{
    vf_page_meta *m = out;
    char **p = str_slot(m, slot);
    if (p != NULL) {
        if (v->type != MSGPACK_OBJECT_STR)
            return VF_IPC_ERR_TYPE;
        vf_ipc_err err = check_slot_str(slot, v->via.str.ptr, v->via.str.size);
        void *copy = NULL;
        if (err == VF_IPC_OK && (err = ipc_dup_bytes(v->via.str.ptr, v->via.str.size, &copy)) == VF_IPC_OK)
            *p = copy;
        return err;
    }
    switch (slot) {
    case M_PAGE_CHARS:
        return ipc_take_uint(v, 0, UINT64_MAX, &m->page_chars);
    case M_MAIN_CHARS:
        return ipc_take_uint(v, 0, UINT64_MAX, &m->main_chars);
    case M_PASSWORD:
        return ipc_take_bool(v, &m->password_field);
    case M_SIGNALS:
        return ipc_take_str_array(v, VF_META_MAX_SIGNALS, check_signal, &m->signals, &m->n_signals);
    }
    return VF_IPC_ERR_UNKNOWN_FIELD;
}

/* The sizes and the extraction used are always known to a worker that sends
 * meta at all. */
#define META_REQUIRED ((1u << M_PAGE_CHARS) | (1u << M_MAIN_CHARS) | (1u << M_EXTRACT))

static vf_ipc_err unpack_into(const msgpack_object *o, vf_page_meta *m, const char **field)
{
    if (o->type != MSGPACK_OBJECT_MAP)
        return VF_IPC_ERR_TYPE;
    uint32_t seen = 0;
    vf_ipc_err err = ipc_walk_map(&o->via.map, meta_keys, M_COUNT, &seen, set_field, m, field);
    if (err == VF_IPC_OK)
        err = ipc_require(seen, meta_keys, M_COUNT, META_REQUIRED, field);
    return err;
}

vf_ipc_err vf_page_meta_unpack(const msgpack_object *o, vf_page_meta **out, const char **field)
{
    const char *ignored;
    if (field == NULL)
        field = &ignored;
    *field = "";
    *out = NULL;
    vf_page_meta *m = calloc(1, sizeof *m);
    if (m == NULL)
        return VF_IPC_ERR_NOMEM;
    vf_ipc_err err = unpack_into(o, m, field);
    if (err != VF_IPC_OK) {
        vf_page_meta_destroy(m);
        return err;
    }
    *out = m;
    return VF_IPC_OK;
}

void vf_page_meta_clear(vf_page_meta *m)
{
    if (m == NULL)
        return;
    for (size_t slot = 0; slot < M_COUNT; slot++) {
        char **p = str_slot(m, slot);
        if (p != NULL)
            free(*p);
    }
    for (size_t i = 0; i < m->n_signals; i++)
        free(m->signals[i]);
    free(m->signals);
    memset(m, 0, sizeof *m);
}

void vf_page_meta_destroy(vf_page_meta *m)
{
    vf_page_meta_clear(m);
    free(m);
}

bool vf_page_meta_add_signal(vf_page_meta *m, const char *token)
{
    if (m->n_signals >= VF_META_MAX_SIGNALS || check_signal(token, strlen(token)) != VF_IPC_OK)
        return false;
    void *copy = NULL;
    ipc_dup_bytes(token, strlen(token), &copy);
    char **grown = copy ? realloc(m->signals, (m->n_signals + 1) * sizeof *grown) : NULL;
    if (grown == NULL) {
        free(copy);
        return false;
    }
    m->signals = grown;
    m->signals[m->n_signals++] = copy;
    return true;
}

bool vf_page_meta_has_signal(const vf_page_meta *m, const char *token)
{
    for (size_t i = 0; m && i < m->n_signals; i++)
        if (strcmp(m->signals[i], token) == 0)
            return true;
    return false;
}
