/* See json_out.h. The output must match jansson's compact form exactly
 * (tests/judge/test_json_out.c compares the two on the same documents), so
 * clients and the tests that parse our answers cannot tell them apart. */
#include "broker/judge/json_out.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/text_simd.h"

/* The broker never nests more than a few levels; a bound keeps the recursion
 * safe whatever a caller passes. */
#define MAX_DEPTH 2048

typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
    /* Holes: long strings left out (vf_json_dump_holes); max_holes 0 = none. */
    size_t min_hole, max_holes, n_holes;
    vf_json_hole *holes;
} outbuf;

static bool reserve(outbuf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n <= b->cap - b->len)
        return true;
    if (n > SIZE_MAX / 4 - b->len) {
        b->failed = true;
        return false;
    }
    size_t want = b->cap + b->cap / 2;
    if (want < b->len + n)
        want = b->len + n;
    if (want < 256)
        want = 256;
    char *grown = realloc(b->data, want);
    if (!grown) {
        b->failed = true;
        return false;
    }
    b->data = grown;
    b->cap = want;
    return true;
}

static void put(outbuf *b, const char *s, size_t n)
{
    if (reserve(b, n)) {
        memcpy(b->data + b->len, s, n);
        b->len += n;
    }
}

/* The lanes of w (their high bits) holding a byte below 0x20, '"' or '\\'.
 * Exact per lane: the high bits are kept out of the additions, so no carry
 * crosses a lane, and bytes with the high bit set never count. */
static inline uint64_t escape_lanes(uint64_t w)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), high = ones * 0x80, low7 = ones * 0x7F;
    uint64_t below20 = ~(((w & low7) + ones * 0x60) | w);
    uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
    uint64_t eq_q = ~(((q & low7) + low7) | q), eq_bs = ~(((bs & low7) + low7) | bs);
    return (below20 | eq_q | eq_bs) & high;
}

/* Byte offset in the word of the first (lowest-addressed) lane set in m. */
static inline size_t first_lane(uint64_t m)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (size_t)__builtin_clzll(m) >> 3;
#else
    return (size_t)__builtin_ctzll(m) >> 3;
#endif
}

/* escape_lanes with the cheaper borrow tests: a borrow can only set lanes
 * above a lane that is truly set, so the lowest set lane is exact (on a
 * little-endian machine, the first byte), the others may not be. */
static inline uint64_t first_escape_lanes(uint64_t w)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return escape_lanes(w);
#else
    const uint64_t ones = UINT64_C(0x0101010101010101), high = ones * 0x80;
    uint64_t lt20 = (w - ones * 0x20) & ~w;
    uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
    return (lt20 | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & high;
#endif
}

/* Length of the run at p[0..len) that needs no escaping. */
static inline size_t plain_run(const unsigned char *p, size_t len)
{
    size_t run = 0;
#if VF_TEXT_SIMD
    for (; len - run >= 16; run += 16) {
        unsigned m = vf_simd_escape_mask(p + run);
        if (m)
            return run + (size_t)__builtin_ctz(m);
    }
#endif
    while (len - run >= 8) {
        uint64_t w;
        memcpy(&w, p + run, 8);
        uint64_t m = first_escape_lanes(w);
        if (m)
            return run + first_lane(m);
        run += 8;
    }
    while (run < len && p[run] >= 0x20 && p[run] != '"' && p[run] != '\\')
        run++;
    return run;
}

/* Writes the escape of one byte that needs it; returns its length (2 or 6). */
static inline size_t escape_byte(char *o, unsigned char c)
{
    static const char hex[] = "0123456789ABCDEF";
    o[0] = '\\';
    switch (c) {
    case '"': o[1] = '"'; return 2;
    case '\\': o[1] = '\\'; return 2;
    case '\b': o[1] = 'b'; return 2;
    case '\f': o[1] = 'f'; return 2;
    case '\n': o[1] = 'n'; return 2;
    case '\r': o[1] = 'r'; return 2;
    case '\t': o[1] = 't'; return 2;
    default:
        memcpy(o + 1, "u00", 3);
        o[4] = hex[c >> 4];
        o[5] = hex[c & 15];
        return 6;
    }
}

size_t vf_json_escape(char *dst, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    char *o = dst;
    size_t i = 0;
    while (i < len) {
        size_t run;
#if VF_TEXT_SIMD
        /* dst's room (six bytes per input byte) covers a whole block. */
        if (len - i >= 16) {
            size_t k;
            run = 0;
            do
                run += k = vf_simd_copy_plain(o + run, p + i + run);
            while (k == 16 && len - i - run >= 16);
        } else
#endif
        {
            run = plain_run(p + i, len - i);
            memcpy(o, p + i, run);
        }
        o += run;
        i += run;
        if (i == len)
            break;
        if (p[i] >= 0x20 && p[i] != '"' && p[i] != '\\')
            continue; /* a whole block was plain */
        o += escape_byte(o, p[i++]);
    }
    return (size_t)(o - dst);
}

static inline bool needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

static inline size_t escape_size(unsigned char c)
{
    switch (c) {
    case '"': case '\\': case '\b': case '\f': case '\n': case '\r': case '\t':
        return 2;
    default:
        return 6;
    }
}

size_t vf_json_escaped_len(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t out = len, i = 0;
#if VF_TEXT_SIMD
    for (; len - i >= 16; i += 16)
        for (unsigned m = vf_simd_escape_mask(p + i); m; m &= m - 1)
            out += escape_size(p[i + (size_t)__builtin_ctz(m)]) - 1;
#endif
    for (; len - i >= 8; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        for (uint64_t m = escape_lanes(w); m; m &= m - 1) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            size_t k = 7 - ((size_t)__builtin_ctzll(m) >> 3);
#else
            size_t k = (size_t)__builtin_ctzll(m) >> 3;
#endif
            out += escape_size(p[i + k]) - 1;
        }
    }
    for (; i < len; i++)
        if (needs_escape(p[i]))
            out += escape_size(p[i]) - 1;
    return out;
}

size_t vf_json_escape_some(char *dst, size_t room, const char *s, size_t len, size_t *consumed)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, o = 0;
    while (i < len && o < room) {
        /* The longest plain run that fits, copied whole. */
        size_t run;
#if VF_TEXT_SIMD
        if (len - i >= 16 && room - o >= 16) {
            size_t k;
            run = 0;
            do
                run += k = vf_simd_copy_plain(dst + o + run, p + i + run);
            while (k == 16 && len - i - run >= 16 && room - o - run >= 16);
        } else
#endif
        {
            run = plain_run(p + i, room - o < len - i ? room - o : len - i);
            memcpy(dst + o, p + i, run);
        }
        o += run;
        i += run;
        if (i == len || o == room || !needs_escape(p[i]))
            continue;
        if (room - o < escape_size(p[i]))
            break;
        o += escape_byte(dst + o, p[i]);
        i++;
    }
    *consumed = i;
    return o;
}

static void put_string(outbuf *b, const char *s, size_t len)
{
    if (b->max_holes && len >= b->min_hole && b->n_holes < b->max_holes) {
        put(b, "\"\"", 2);
        if (!b->failed)
            b->holes[b->n_holes++] = (vf_json_hole){ .at = b->len - 1, .s = s, .len = len,
                                                     .escaped_len = vf_json_escaped_len(s, len) };
        return;
    }
    /* In slices, so the worst-case room reserved stays small (a slice of
     * control bytes grows six-fold) while a long text is still copied in
     * bulk; a large buffer grows by mremap, without copying. */
    enum { SLICE = 64 * 1024 };
    if (!reserve(b, 1))
        return;
    b->data[b->len++] = '"';
    for (size_t off = 0; off < len;) {
        size_t n = len - off < SLICE ? len - off : SLICE;
        if (!reserve(b, vf_json_escaped_max(n)))
            return;
        b->len += vf_json_escape(b->data + b->len, s + off, n);
        off += n;
    }
    put(b, "\"", 1);
}

static void dump(outbuf *b, const json_t *j, unsigned depth)
{
    if (b->failed)
        return;
    if (depth > MAX_DEPTH) {
        b->failed = true;
        return;
    }
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        put(b, "{", 1);
        const char *key;
        json_t *v;
        bool first = true;
        /* jansson keeps insertion order and dumps in it; so do we. */
        void *it = json_object_iter((json_t *)j);
        for (; it; it = json_object_iter_next((json_t *)j, it)) {
            key = json_object_iter_key(it);
            v = json_object_iter_value(it);
            if (!first)
                put(b, ",", 1);
            first = false;
            put_string(b, key, json_object_iter_key_len(it));
            put(b, ":", 1);
            dump(b, v, depth + 1);
        }
        put(b, "}", 1);
        return;
    }
    case JSON_ARRAY: {
        put(b, "[", 1);
        for (size_t i = 0; i < json_array_size(j); i++) {
            if (i)
                put(b, ",", 1);
            dump(b, json_array_get(j, i), depth + 1);
        }
        put(b, "]", 1);
        return;
    }
    case JSON_STRING:
        put_string(b, json_string_value(j), json_string_length(j));
        return;
    case JSON_INTEGER: {
        char num[32];
        int n = snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
        put(b, num, (size_t)n);
        return;
    }
    case JSON_REAL: {
        /* Rare here (none in a ToolResult); jansson's own formatting. */
        char *num = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!num) {
            b->failed = true;
            return;
        }
        put(b, num, strlen(num));
        free(num);
        return;
    }
    case JSON_TRUE: put(b, "true", 4); return;
    case JSON_FALSE: put(b, "false", 5); return;
    case JSON_NULL: put(b, "null", 4); return;
    }
    b->failed = true;
}

static char *dump_to(outbuf *b_in, const json_t *doc, size_t *len);

char *vf_json_dump(const json_t *doc, size_t *len)
{
    outbuf b = { 0 };
    return dump_to(&b, doc, len);
}

char *vf_json_dump_holes(const json_t *doc, size_t min_hole, vf_json_hole *holes, size_t max_holes,
                         size_t *n_holes, size_t *len)
{
    outbuf b = { .min_hole = min_hole ? min_hole : 1, .max_holes = holes ? max_holes : 0, .holes = holes };
    char *text = dump_to(&b, doc, len);
    *n_holes = text ? b.n_holes : 0;
    return text;
}

static char *dump_to(outbuf *b_in, const json_t *doc, size_t *len)
{
    outbuf b = *b_in;
    if (!doc)
        return NULL;
    dump(&b, doc, 0);
    b_in->n_holes = b.n_holes;
    if (!reserve(&b, 1)) {
        free(b.data);
        return NULL;
    }
    b.data[b.len] = '\0';
    if (len)
        *len = b.len;
    return b.data;
}

/* ---- streaming ---------------------------------------------------------- */

/* A ToolResult has one page text (a failure none); room for a few. */
#define MAX_HOLES 4

struct vf_json_stream {
    json_t *doc;                 /* owns the strings the holes point into */
    char *frame;                 /* the document with the long strings left out */
    size_t frame_len;
    vf_json_hole holes[MAX_HOLES];
    size_t n_holes;
    /* Next byte: frame[frame_pos], or byte hole_pos of hole `hole` when in_hole. */
    size_t frame_pos, hole, hole_pos;
    bool in_hole;
};

vf_json_stream *vf_json_stream_new(json_t *doc, size_t min_hole, size_t *total)
{
    vf_json_stream *st = doc ? calloc(1, sizeof *st) : NULL;
    if (!st) {
        json_decref(doc);
        return NULL;
    }
    st->doc = doc;
    st->frame = vf_json_dump_holes(doc, min_hole, st->holes, MAX_HOLES, &st->n_holes, &st->frame_len);
    if (!st->frame) {
        vf_json_stream_free(st);
        return NULL;
    }
    *total = st->frame_len;
    for (size_t i = 0; i < st->n_holes; i++)
        *total += st->holes[i].escaped_len;
    return st;
}

/* The frame up to the next hole, then that hole escaped, and so on. */
size_t vf_json_stream_read(vf_json_stream *st, char *buf, size_t max)
{
    size_t out = 0;
    while (out < max) {
        if (st->in_hole) {
            const vf_json_hole *h = &st->holes[st->hole];
            size_t used = 0;
            out += vf_json_escape_some(buf + out, max - out, h->s + st->hole_pos, h->len - st->hole_pos, &used);
            st->hole_pos += used;
            if (st->hole_pos < h->len)
                break; /* buffer full (or too small for the next escape) */
            st->in_hole = false;
            st->hole++;
            continue;
        }
        size_t until = st->hole < st->n_holes ? st->holes[st->hole].at : st->frame_len;
        if (st->frame_pos == until) {
            if (st->hole >= st->n_holes)
                break; /* all written */
            st->in_hole = true;
            st->hole_pos = 0;
            continue;
        }
        size_t n = until - st->frame_pos < max - out ? until - st->frame_pos : max - out;
        memcpy(buf + out, st->frame + st->frame_pos, n);
        out += n;
        st->frame_pos += n;
    }
    return out;
}

char *vf_json_stream_read_all(vf_json_stream *st, size_t total)
{
    size_t room = total + 8;   /* a read is given room for the longest escape (6) */
    char *buf = malloc(room);
    size_t got = 0;
    while (buf && got < total) {
        size_t n = vf_json_stream_read(st, buf + got, room - 1 - got);
        if (n == 0)
            break;
        got += n;
    }
    if (buf && got != total) {
        free(buf);
        return NULL;
    }
    if (buf)
        buf[total] = '\0';
    return buf;
}

void vf_json_stream_free(vf_json_stream *st)
{
    if (!st)
        return;
    json_decref(st->doc);
    free(st->frame);
    free(st);
}
