/* Exact-value scrubbing of configured secrets.
 *
 * Each secret is searched for in the forms it takes when it leaks:
 *  - raw, URL-encoded and every other spelling of secret_spelling.h: one
 *    "flex" comparison accepts, per byte, the byte itself, %XX, '+' for a
 *    space, \xXX, \u00XX, an HTML entity or an NFKC look-alike (fullwidth,
 *    mathematical letters...), with line breaks and zero-width characters
 *    between characters skipped, so every encoder's (or evader's) choice of
 *    what to escape is covered by a single needle;
 *  - hex, upper or lower case (a key dumped as bytes);
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

#include "broker/judge/secret_spelling.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below this many fixed characters an embedded base64 needle would hit
 * ordinary words; shorter secrets are matched as standalone base64 only. */
#define B64_INNER_MIN 6
/* Hex of a shorter secret is too likely to be some other hex. */
#define HEX_SECRET_MIN 8

typedef enum {
    FORM_FLEX,      /* raw or URL-encoded */
    FORM_LITERAL,   /* raw, for secrets that themselves contain an escape character */
    FORM_HEX,       /* lowercase hex of the secret, matched in any case */
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

typedef struct {
    unsigned char s[192][4];
    size_t len[192];
    size_t n;
} spelling_list;

static void collect(void *ctx, const unsigned char *sp, size_t len)
{
    spelling_list *l = ctx;
    if (l->n < sizeof l->s / sizeof l->s[0]) {
        size_t take = len < 3 ? len : 3; /* only prefixes are needed */
        memcpy(l->s[l->n], sp, take);
        l->len[l->n++] = take;
    }
}

typedef struct {
    vf_secret_set *set;
    const unsigned char *sec;
    size_t n;
    spelling_list *spellings; /* per secret byte, for the first three */
    spelling_list *gaps;
} prefix_walk;

/* Every 3-byte prefix a flex match of sec can start with: spellings of
 * byte k, and from the second character on, gap pieces before it. */
static void mark_flex_prefixes(const prefix_walk *w, size_t k, unsigned char prefix[3], size_t plen)
{
    if (plen >= 3 || k == w->n) {
        mark_prefix(w->set, prefix, plen);
        return;
    }
    const spelling_list *l = &w->spellings[k];
    for (size_t e = 0; e < l->n; e++) {
        unsigned char next[3];
        memcpy(next, prefix, plen);
        size_t take = l->len[e] < 3 - plen ? l->len[e] : 3 - plen;
        memcpy(next + plen, l->s[e], take);
        mark_flex_prefixes(w, k + 1, next, plen + take);
    }
    for (size_t g = 0; k > 0 && g < w->gaps->n; g++) {
        unsigned char next[3];
        memcpy(next, prefix, plen);
        size_t take = w->gaps->len[g] < 3 - plen ? w->gaps->len[g] : 3 - plen;
        memcpy(next + plen, w->gaps->s[g], take);
        mark_flex_prefixes(w, k, next, plen + take);
    }
}

static bool mark_flex(vf_secret_set *s, const unsigned char *sec, size_t n)
{
    size_t first = n < 3 ? n : 3;
    spelling_list *lists = calloc(first + 1, sizeof *lists);
    if (!lists)
        return false;
    for (size_t k = 0; k < first; k++)
        vf_spellings_of(sec[k], collect, &lists[k]);
    vf_gap_pieces(collect, &lists[first]);
    prefix_walk w = { s, sec, n, lists, &lists[first] };
    unsigned char prefix[3];
    mark_flex_prefixes(&w, 0, prefix, 0);
    free(lists);
    return true;
}

/* Lowercase hex, and its first three characters in every case. */
static bool add_hex(vf_secret_set *s, const unsigned char *sec, size_t n)
{
    static const char lo[] = "0123456789abcdef";
    unsigned char *hex = malloc(2 * n);
    if (!hex)
        return false;
    for (size_t i = 0; i < n; i++)
        hex[2 * i] = (unsigned char)lo[sec[i] >> 4], hex[2 * i + 1] = (unsigned char)lo[sec[i] & 15];
    bool ok = add_needle(s, hex, 2 * n, FORM_HEX);
    for (unsigned mask = 0; ok && mask < 8; mask++) {
        unsigned char p[3];
        for (int j = 0; j < 3; j++)
            p[j] = (mask >> j & 1) && hex[j] >= 'a' ? (unsigned char)(hex[j] - 'a' + 'A') : hex[j];
        mark_prefix(s, p, 3);
    }
    free(hex);
    return ok;
}

static bool add_secret(vf_secret_set *s, const unsigned char *sec, size_t n)
{
    if (!add_needle(s, sec, n, FORM_FLEX) || !mark_flex(s, sec, n))
        return false;
    /* The raw form is one of the flex prefixes, so LITERAL needs no marks. */
    bool escapes = memchr(sec, '%', n) || memchr(sec, '\\', n) || memchr(sec, '&', n);
    if (escapes && !add_needle(s, sec, n, FORM_LITERAL))
        return false;
    if (n >= HEX_SECRET_MIN && !add_hex(s, sec, n))
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

/* Length of text spelling sec (secret_spelling.h); 0 if none. */
static size_t match_flex(const unsigned char *t, size_t avail, const unsigned char *sec, size_t n)
{
    size_t j = 0;
    for (size_t k = 0; k < n; k++) {
        if (k > 0)
            j += vf_spelling_gap(t + j, avail - j);
        size_t m = vf_spelled_byte(t + j, avail - j, sec[k]);
        if (m == 0)
            return 0;
        j += m;
    }
    return j;
}

static bool hex_equal(const unsigned char *t, const unsigned char *lower_hex, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = t[i] >= 'A' && t[i] <= 'F' ? (unsigned char)(t[i] - 'A' + 'a') : t[i];
        if (c != lower_hex[i])
            return false;
    }
    return true;
}

/* Widens the base64 hit t[i..e) to its whole run, not below floor. The run
 * is measured once and remembered: a later hit inside it (the scan looks
 * at every trigger within a replaced span) reuses it. A remembered start
 * was either where a non-base64 byte stopped the walk or an earlier floor,
 * and floors only grow, so the start is the larger of it and floor. */
static void b64_widen(vf_b64_run *run, const unsigned char *t, size_t len, size_t i, size_t floor,
                      size_t *s, size_t *e)
{
    if (!(run->lo <= i && *e <= run->hi)) {
        size_t lo = i, hi = *e;
        while (lo > floor && is_b64_char(t[lo - 1]))
            lo--;
        while (hi < len && is_b64_char(t[hi]))
            hi++;
        *run = (vf_b64_run){lo, hi};
    }
    *s = run->lo > floor ? run->lo : floor;
    *e = run->hi;
}

/* Does needle nd match at t[i]? On success [*start, *end) is what to redact.
 * floor: first byte not yet consumed by an earlier replacement. */
static bool match_at(const needle *nd, const unsigned char *t, size_t len, size_t i,
                     size_t floor, vf_b64_run *run, size_t *start, size_t *end)
{
    size_t avail = len - i;
    if (nd->form == FORM_FLEX) {
        size_t m = match_flex(t + i, avail, nd->bytes, nd->len);
        *start = i;
        *end = i + m;
        return m > 0;
    }
    if (nd->form == FORM_HEX) {
        *start = i;
        *end = i + nd->len;
        return nd->len <= avail && hex_equal(t + i, nd->bytes, nd->len);
    }
    if (nd->len > avail || memcmp(t + i, nd->bytes, nd->len) != 0)
        return false;
    size_t s = i, e = i + nd->len;
    if (nd->form == FORM_B64_INNER) {
        b64_widen(run, t, len, i, floor, &s, &e);
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
                     size_t floor, vf_b64_run *run, size_t *start, size_t *end)
{
    /* Longest hit wins, so an encoded form is not cut short by a raw one. */
    size_t best_s = 0, best_e = 0;
    for (size_t k = 0; k < s->n_needles; k++) {
        size_t ms, me;
        if (match_at(&s->needles[k], t, len, i, floor, run, &ms, &me) && me > best_e) {
            best_s = ms;
            best_e = me;
        }
    }
    *start = best_s;
    *end = best_e;
    return best_e > 0;
}
