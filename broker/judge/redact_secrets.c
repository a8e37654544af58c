/* Exact-value scrubbing of configured secrets.
 *
 * Each secret is searched for in the forms it takes when it leaks:
 *  - raw and URL-encoded: one "flex" comparison accepts, per byte, the byte
 *    itself, %XX in either hex case, or '+' for a space, so every encoder's
 *    choice of what to escape is covered by a single needle;
 *  - base64 (standard and URL-safe alphabet, any padding), also when the
 *    secret sits inside a longer encoded value such as HTTP Basic
 *    "user:SECRET": the secret can start at any of three byte alignments
 *    within a 3-byte group, and for each the characters whose 6 bits come
 *    only from the secret are fixed. Those inner characters are the needle;
 *    a hit redacts the whole surrounding base64 run, because the characters
 *    next to the needle still carry a few bits of the secret.
 * Every 3-byte prefix a form can start with goes into a trigger set, so the
 * shared scan (redact_scan.c) asks here only where a form may begin. */
#include "broker/judge/redact_secrets.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below this many fixed characters an embedded base64 needle would hit
 * ordinary words; shorter secrets are matched as standalone base64 only. */
#define B64_INNER_MIN 6

typedef enum {
    FORM_FLEX,      /* raw or URL-encoded */
    FORM_LITERAL,   /* raw, for secrets that themselves contain '%' */
    FORM_B64_INNER, /* fixed inner characters; hit extends over the run */
    FORM_B64_WHOLE, /* complete unpadded encoding, must stand alone */
} form_kind;

typedef struct {
    unsigned char *bytes;
    size_t len;
    form_kind form;
} needle;

struct vf_secret_set {
    needle *needles;
    size_t n_needles, cap_needles;
    size_t n_secrets;
    vf_trigset starts; /* 3-byte prefixes any form may start with */
};

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool is_b64_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '+' || c == '/' || c == '-' || c == '_';
}

static bool add_needle(vf_secret_set *s, const unsigned char *bytes, size_t len, form_kind form)
{
    for (size_t i = 0; i < s->n_needles; i++)
        if (s->needles[i].form == form && s->needles[i].len == len &&
            memcmp(s->needles[i].bytes, bytes, len) == 0)
            return true;
    if (s->n_needles == s->cap_needles) {
        size_t cap = s->cap_needles ? s->cap_needles * 2 : 8;
        needle *grown = realloc(s->needles, cap * sizeof *grown);
        if (!grown)
            return false;
        s->needles = grown;
        s->cap_needles = cap;
    }
    unsigned char *copy = malloc(len);
    if (!copy)
        return false;
    memcpy(copy, bytes, len);
    s->needles[s->n_needles++] = (needle){copy, len, form};
    return true;
}

/* 6 bits of sec starting at bit offset pos (MSB first); bits past the end read 0. */
static unsigned bits6(const unsigned char *sec, size_t n, size_t pos)
{
    unsigned v = 0;
    for (size_t b = pos; b < pos + 6; b++) {
        unsigned bit = b / 8 < n ? (sec[b / 8] >> (7 - b % 8)) & 1 : 0;
        v = v << 1 | bit;
    }
    return v;
}

/* Base64 characters of sec when preceded by `align` unknown bytes, keeping
 * only characters made entirely of secret bits. */
static size_t b64_inner(const unsigned char *sec, size_t n, unsigned align,
                        const char *alphabet, unsigned char *out)
{
    size_t first = (8 * align + 5) / 6, end = 8 * (align + n) / 6, o = 0;
    for (size_t j = first; j < end; j++)
        out[o++] = (unsigned char)alphabet[bits6(sec, n, 6 * j - 8 * align)];
    return o;
}

/* Complete unpadded encoding (last character zero-filled). */
static size_t b64_whole(const unsigned char *sec, size_t n, const char *alphabet, unsigned char *out)
{
    size_t chars = (8 * n + 5) / 6;
    for (size_t j = 0; j < chars; j++)
        out[j] = (unsigned char)alphabet[bits6(sec, n, 6 * j)];
    return chars;
}

/* Registers every 3-byte prefix of `len` bytes of b, with all completions
 * when the form is shorter than three bytes. */
static void mark_prefix(vf_secret_set *s, const unsigned char *b, size_t len)
{
    if (len >= 3)
        vf_trigset_add(&s->starts, b[0], b[1], b[2]);
    else if (len == 2)
        vf_trigset_add_pair(&s->starts, b[0], b[1]);
    else
        vf_trigset_add_all(&s->starts);
}

/* Ways byte c can appear in URL-encoded text: itself, '+' for a space, and
 * %XX with each hex letter in either case. Returns the count (<= 6). */
static size_t encodings(unsigned char c, unsigned char out[6][3], size_t lens[6])
{
    static const char up[] = "0123456789ABCDEF", lo[] = "0123456789abcdef";
    size_t n = 0;
    out[n][0] = c, lens[n++] = 1;
    if (c == ' ')
        out[n][0] = '+', lens[n++] = 1;
    for (int hi = 0; hi < 2; hi++)
        for (int lw = 0; lw < 2; lw++) {
            unsigned char h = (unsigned char)(hi ? lo : up)[c >> 4], l = (unsigned char)(lw ? lo : up)[c & 15];
            bool dup = false;
            for (size_t k = 1; k < n; k++)
                dup |= lens[k] == 3 && out[k][1] == h && out[k][2] == l;
            if (!dup)
                out[n][0] = '%', out[n][1] = h, out[n][2] = l, lens[n++] = 3;
        }
    return n;
}

/* Every 3-byte prefix a flex match of sec can start with. */
static void mark_flex_prefixes(vf_secret_set *s, const unsigned char *sec, size_t n, size_t k,
                               unsigned char prefix[3], size_t plen)
{
    if (plen >= 3 || k == n) {
        mark_prefix(s, prefix, plen);
        return;
    }
    unsigned char enc[6][3];
    size_t lens[6], count = encodings(sec[k], enc, lens);
    for (size_t e = 0; e < count; e++) {
        unsigned char next[3];
        memcpy(next, prefix, plen);
        size_t take = lens[e] < 3 - plen ? lens[e] : 3 - plen;
        memcpy(next + plen, enc[e], take);
        mark_flex_prefixes(s, sec, n, k + 1, next, plen + take);
    }
}

static bool add_secret(vf_secret_set *s, const unsigned char *sec, size_t n)
{
    if (!add_needle(s, sec, n, FORM_FLEX))
        return false;
    unsigned char prefix[3];
    mark_flex_prefixes(s, sec, n, 0, prefix, 0);
    /* The raw form is one of the flex prefixes, so LITERAL needs no marks. */
    if (memchr(sec, '%', n) && !add_needle(s, sec, n, FORM_LITERAL))
        return false;
    unsigned char *enc = malloc(n * 4 / 3 + 8);
    if (!enc)
        return false;
    bool ok = true;
    const char *alphabets[2] = {b64_std, b64_url};
    /* Fixed characters per alignment: 8n/6, 8(n+1)/6 - 2, 8(n+2)/6 - 3. The
     * alignment-0 inner needle is a prefix of the whole encoding, so whole
     * forms are only needed when some inner needle would be too short. */
    bool inner = 8 * n / 6 >= B64_INNER_MIN && (8 * (n + 1) / 6) - 2 >= B64_INNER_MIN &&
                 (8 * (n + 2) / 6) - 3 >= B64_INNER_MIN;
    for (size_t a = 0; a < 2 && ok; a++) {
        if (!inner) {
            size_t len = b64_whole(sec, n, alphabets[a], enc);
            ok = add_needle(s, enc, len, FORM_B64_WHOLE);
            if (ok)
                mark_prefix(s, enc, len);
            continue;
        }
        for (unsigned align = 0; align < 3 && ok; align++) {
            size_t len = b64_inner(sec, n, align, alphabets[a], enc);
            ok = add_needle(s, enc, len, FORM_B64_INNER);
            if (ok)
                mark_prefix(s, enc, len);
        }
    }
    free(enc);
    return ok;
}

vf_secret_set *vf_secret_set_new(const char *const *secrets, size_t n_secrets,
                                 char *err, size_t errlen)
{
    vf_secret_set *s = calloc(1, sizeof *s);
    if (!s)
        goto oom;
    for (size_t i = 0; secrets && i < n_secrets; i++) {
        if (!secrets[i] || !secrets[i][0])
            continue;
        size_t n = strlen(secrets[i]);
        if (n > VF_SECRET_MAX_LEN) {
            if (err && errlen)
                snprintf(err, errlen, "secret %zu is longer than %d bytes", i, VF_SECRET_MAX_LEN);
            vf_secret_set_free(s);
            return NULL;
        }
        if (!add_secret(s, (const unsigned char *)secrets[i], n))
            goto oom;
        s->n_secrets++;
    }
    return s;
oom:
    if (err && errlen)
        snprintf(err, errlen, "out of memory");
    vf_secret_set_free(s);
    return NULL;
}

void vf_secret_set_free(vf_secret_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_needles; i++)
        free(s->needles[i].bytes);
    free(s->needles);
    free(s);
}

size_t vf_secret_set_count(const vf_secret_set *s)
{
    return s ? s->n_secrets : 0;
}

/* Length of text matching sec with each byte raw, %XX or '+' for space; 0 if none. */
static size_t match_flex(const unsigned char *t, size_t avail, const unsigned char *sec, size_t n)
{
    size_t j = 0;
    for (size_t k = 0; k < n; k++) {
        if (j >= avail)
            return 0;
        unsigned char c = t[j];
        if (c == '%' && avail - j >= 3 && hexval(t[j + 1]) >= 0 && hexval(t[j + 2]) >= 0) {
            if ((unsigned)(hexval(t[j + 1]) << 4 | hexval(t[j + 2])) != sec[k])
                return 0;
            j += 3;
        } else if (c == sec[k] || (c == '+' && sec[k] == ' ')) {
            j++;
        } else {
            return 0;
        }
    }
    return j;
}

/* Does needle nd match at t[i]? On success [*start, *end) is what to redact.
 * floor: first byte not yet consumed by an earlier replacement. */
static bool match_at(const needle *nd, const unsigned char *t, size_t len, size_t i,
                     size_t floor, size_t *start, size_t *end)
{
    size_t avail = len - i;
    if (nd->form == FORM_FLEX) {
        size_t m = match_flex(t + i, avail, nd->bytes, nd->len);
        *start = i;
        *end = i + m;
        return m > 0;
    }
    if (nd->len > avail || memcmp(t + i, nd->bytes, nd->len) != 0)
        return false;
    size_t s = i, e = i + nd->len;
    if (nd->form == FORM_B64_INNER) {
        while (s > floor && is_b64_char(t[s - 1]))
            s--;
        while (e < len && is_b64_char(t[e]))
            e++;
    } else if (nd->form == FORM_B64_WHOLE) {
        if ((s > floor && is_b64_char(t[s - 1])) || (e < len && is_b64_char(t[e])))
            return false;
    }
    if (nd->form != FORM_LITERAL)
        for (int pad = 0; pad < 2 && e < len && t[e] == '='; pad++)
            e++;
    *start = s;
    *end = e;
    return true;
}

const vf_trigset *vf_secret_set_triggers(const vf_secret_set *s)
{
    return &s->starts;
}

bool vf_secret_match(const vf_secret_set *s, const unsigned char *t, size_t len, size_t i,
                     size_t floor, size_t *start, size_t *end)
{
    /* Longest hit wins, so an encoded form is not cut short by a raw one. */
    size_t best_s = 0, best_e = 0;
    for (size_t k = 0; k < s->n_needles; k++) {
        size_t ms, me;
        if (match_at(&s->needles[k], t, len, i, floor, &ms, &me) && me > best_e) {
            best_s = ms;
            best_e = me;
        }
    }
    *start = best_s;
    *end = best_e;
    return best_e > 0;
}
