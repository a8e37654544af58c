/* msgpack form of vf_page_meta (ipc_page_meta.h). The outer decoder has
 * already bounded depth and item count; this file judges the map itself. */
#include "ipc/ipc_page_meta.h"

#include <stdlib.h>
#include <string.h>

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
    if (n > cap || memchr(s, '\0', n) != NULL || !utf8_valid((const unsigned char *)s, n))
        return VF_IPC_ERR_RANGE;
    return VF_IPC_OK;
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

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p != NULL) {
        if (n > 0)
            memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static vf_ipc_err take_signals(const msgpack_object *o, vf_page_meta *m)
{
    if (o->type != MSGPACK_OBJECT_ARRAY)
        return VF_IPC_ERR_TYPE;
    const msgpack_object_array *a = &o->via.array;
    if (a->size > VF_META_MAX_SIGNALS)
        return VF_IPC_ERR_RANGE;
    for (uint32_t i = 0; i < a->size; i++) {
        if (a->ptr[i].type != MSGPACK_OBJECT_STR)
            return VF_IPC_ERR_TYPE;
        vf_ipc_err err = check_signal(a->ptr[i].via.str.ptr, a->ptr[i].via.str.size);
        if (err != VF_IPC_OK)
            return err;
    }
    if (a->size == 0)
        return VF_IPC_OK;
    m->signals = calloc(a->size, sizeof *m->signals);
    if (m->signals == NULL)
        return VF_IPC_ERR_NOMEM;
    for (uint32_t i = 0; i < a->size; i++) {
        m->signals[i] = dup_n(a->ptr[i].via.str.ptr, a->ptr[i].via.str.size);
        if (m->signals[i] == NULL)
            return VF_IPC_ERR_NOMEM;
        m->n_signals = i + 1;
    }
    return VF_IPC_OK;
}

static vf_ipc_err take_count(const msgpack_object *o, uint64_t *out)
{
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        return VF_IPC_ERR_RANGE;
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return VF_IPC_ERR_TYPE;
    *out = o->via.u64;
    return VF_IPC_OK;
}

static vf_ipc_err set_field(vf_page_meta *m, size_t slot, const msgpack_object *v)
{
    char **p = str_slot(m, slot);
    if (p != NULL) {
        if (v->type != MSGPACK_OBJECT_STR)
            return VF_IPC_ERR_TYPE;
        vf_ipc_err err = check_slot_str(slot, v->via.str.ptr, v->via.str.size);
        if (err != VF_IPC_OK)
            return err;
        *p = dup_n(v->via.str.ptr, v->via.str.size);
        return *p != NULL ? VF_IPC_OK : VF_IPC_ERR_NOMEM;
    }
    switch (slot) {
    case M_PAGE_CHARS:
        return take_count(v, &m->page_chars);
    case M_MAIN_CHARS:
        return take_count(v, &m->main_chars);
    case M_PASSWORD:
        if (v->type != MSGPACK_OBJECT_BOOLEAN)
            return VF_IPC_ERR_TYPE;
        m->password_field = v->via.boolean;
        return VF_IPC_OK;
    case M_SIGNALS:
        return take_signals(v, m);
    }
    return VF_IPC_ERR_UNKNOWN_FIELD;
}

static vf_ipc_err unpack_into(const msgpack_object *o, vf_page_meta *m, const char **field)
{
    if (o->type != MSGPACK_OBJECT_MAP)
        return VF_IPC_ERR_TYPE;
    const msgpack_object_map *map = &o->via.map;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < map->size; i++) {
        const msgpack_object *k = &map->ptr[i].key;
        if (k->type != MSGPACK_OBJECT_STR)
            return VF_IPC_ERR_TYPE;
        size_t slot = M_COUNT;
        for (size_t s = 0; s < M_COUNT; s++)
            if (strlen(meta_keys[s]) == k->via.str.size &&
                memcmp(meta_keys[s], k->via.str.ptr, k->via.str.size) == 0)
                slot = s;
        if (slot == M_COUNT)
            return VF_IPC_ERR_UNKNOWN_FIELD;
        *field = meta_keys[slot];
        if (seen & (1u << slot))
            return VF_IPC_ERR_DUPLICATE;
        seen |= 1u << slot;
        vf_ipc_err err = set_field(m, slot, &map->ptr[i].val);
        if (err != VF_IPC_OK)
            return err;
        *field = "";
    }
    /* The sizes and the extraction used are always known to a worker that
     * sends meta at all. */
    static const size_t required[] = { M_PAGE_CHARS, M_MAIN_CHARS, M_EXTRACT };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        if (!(seen & (1u << required[i]))) {
            *field = meta_keys[required[i]];
            return VF_IPC_ERR_MISSING;
        }
    }
    return VF_IPC_OK;
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
    char *copy = dup_n(token, strlen(token));
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
