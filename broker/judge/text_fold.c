/* Folding through utf8proc: one call does NFKC + case folding + lumping,
 * a custom map adds the quotes utf8proc does not lump, and whitespace runs
 * are collapsed as the output is written. Invalid input is repaired first
 * because utf8proc refuses it whole.
 *
 * Most text is ASCII, and for ASCII the whole mapping is a table (case to
 * lower, tab and line breaks to a space, other controls dropped), so plain
 * runs skip utf8proc. Only an ASCII character followed by an ASCII one that
 * stays (or by the end) takes that path: it cannot compose with what
 * follows (a combining mark would be non-ASCII), nor with what precedes it
 * (no ASCII character is a combining mark or the second of a composition),
 * so each stretch utf8proc
 * still sees begins at a normalisation boundary and ends at one; the output
 * is byte for byte the whole-string mapping (tests/text/test_fold.c). */
#include "broker/judge/text_fold.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "broker/judge/text_simd.h"

utf8proc_int32_t vf_fold_punct(utf8proc_int32_t cp, void *data)
{
    (void)data;
    switch (cp) {
    case 0x2018: case 0x2019: case 0x201A: case 0x201B: case 0x2032: case 0x2039: case 0x203A:
    case 0x275B: case 0x275C: case 0x300C: case 0x300D: case 0xFF07:
        return '\'';
    case 0x00AB: case 0x00BB: case 0x201C: case 0x201D: case 0x201E: case 0x201F: case 0x2033:
    case 0x275D: case 0x275E: case 0x300E: case 0x300F: case 0xFF02:
        return '"';
    case 0x2E17: case 0x2E3A: case 0x2E3B: case 0xFE58:
        return '-';
    default:
        return cp;
    }
}

#define FOLD_OPTIONS                                                                              \
    (UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD | UTF8PROC_IGNORE | \
     UTF8PROC_LUMP | UTF8PROC_STRIPCC)

/* What the options above make of an ASCII byte other than NUL: itself, its
 * lower case, a space (tab, LF, VT, FF, CR: STRIPCC) or nothing (0: other
 * controls and DEL). */
static const unsigned char ascii_fold[128] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x20, 0x20, 0x20, 0x20, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f,
    0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f,
    0x40, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
    0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f,
    0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
    0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x7b, 0x7c, 0x7d, 0x7e, 0x00,
};

typedef struct {
    char *buf;
    size_t len, cap;
    bool pending_space; /* a space run seen after some output: written before the next byte */
    size_t dropped;     /* output already searched and let go (vf_fold_contains) */
} folded;

static bool reserve(folded *f, size_t more)
{
    if (f->cap - f->len > more)
        return true;
    size_t cap = f->cap ? f->cap : 64;
    while (cap - f->len <= more)
        cap *= 2;
    char *nb = realloc(f->buf, cap);
    if (!nb)
        return false;
    f->buf = nb;
    f->cap = cap;
    return true;
}

/* Room must be reserved: at most 2 bytes per call. LUMP turned every space
 * character into ' ' and STRIPCC every line break and tab; runs collapse
 * to one, none leads and none trails. */
static void put(folded *f, unsigned char ch)
{
    if (ch == ' ') {
        f->pending_space = f->len + f->dropped > 0;
        return;
    }
    if (f->pending_space)
        f->buf[f->len++] = ' ';
    f->pending_space = false;
    f->buf[f->len++] = (char)ch;
}

/* Copy with every invalid sequence replaced by U+FFFD (utf8proc_map
 * rejects the whole string otherwise). */
static uint8_t *repair_utf8(const char *s, size_t len, size_t *out_len)
{
    uint8_t *out = malloc(len * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0, i = 0;
    while (i < len) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate((const uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &cp);
        if (n <= 0 || cp == 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3); /* NUL too: utf8proc would stop there */
            o += 3;
            i++;
            continue;
        }
        memcpy(out + o, s + i, (size_t)n);
        o += (size_t)n;
        i += (size_t)n;
    }
    out[o] = '\0';
    *out_len = o;
    return out;
}

/* One stretch through utf8proc, appended. */
static bool fold_stretch(folded *f, const char *s, size_t len)
{
    size_t fixed_len = 0;
    uint8_t *fixed = repair_utf8(s, len, &fixed_len);
    if (!fixed)
        return false;
    uint8_t *mapped = NULL;
    utf8proc_ssize_t n = utf8proc_map_custom(fixed, (utf8proc_ssize_t)fixed_len, &mapped, FOLD_OPTIONS,
                                             vf_fold_punct, NULL);
    free(fixed);
    if (n < 0)
        return false; /* only UTF8PROC_ERROR_NOMEM is left once the input is valid */
    bool ok = reserve(f, 2 * (size_t)n);
    for (utf8proc_ssize_t i = 0; ok && i < n; i++)
        put(f, mapped[i]);
    free(mapped);
    return ok;
}

/* An ASCII byte (not NUL, which repair turns into U+FFFD) that nothing
 * after it can combine with: the next byte is an ASCII character that
 * stays (a control STRIPCC drops would bring the byte after it next to
 * this one before composition: ">" DEL U+0338 composes to U+226F). */
static bool ascii_alone(const unsigned char *s, size_t len, size_t i)
{
    return s[i] && s[i] < 0x80 && (i + 1 == len || (s[i + 1] < 0x80 && ascii_fold[s[i + 1]]));
}

#if VF_TEXT_SIMD
/* The common stretch of prose, sixteen bytes at a time: printable ASCII
 * followed by a byte that lets the last one stand alone (ascii_alone), no
 * leading space and no two spaces together. Then folding is lower-casing,
 * and each space (between two kept bytes) is written as it stands. Writes
 * the folded block to dst (room for 16) and returns the input bytes it
 * covers: 16, or 15 when the block ends in a space (left for the next step,
 * which decides whether it is written), or 0 when the block does not
 * qualify (nothing written). */
static size_t fold_block(const unsigned char *p, char *dst)
{
    __m128i x = vf_simd_load(p);
    __m128i odd = _mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7F)));
    if (_mm_movemask_epi8(odd) || p[16] >= 0x80 || !ascii_fold[p[16]])
        return 0;
    unsigned sp = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));
    if ((sp & 1u) || (sp & (sp >> 1)))
        return 0;
    __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('A' - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8('Z' + 1)));
    _mm_storeu_si128((__m128i *)(void *)dst, _mm_add_epi8(x, _mm_and_si128(upper, _mm_set1_epi8(0x20))));
    return (sp & 0x8000u) ? 15 : 16;
}
#endif

/* Folds s[*i..) onward by at most about `chunk` input bytes (a stretch
 * utf8proc must see whole may be longer), appending to f. The stretches are
 * the same whatever the chunk: a chunk ends only inside an ASCII run. */
static bool fold_step(folded *f, const char *s, size_t len, size_t *at, size_t chunk)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = *at, limit = len - i > chunk ? i + chunk : len;
    /* The rest of the chunk is at most this long as ASCII; put() inlined. */
    if (!reserve(f, limit - i + 1))
        return false;
    char *out = f->buf;
    size_t o = f->len;
    bool pending = f->pending_space;
    while (i < limit) {
        size_t span = limit - i;
#if VF_TEXT_SIMD
        if (span >= 16 && len - i >= 17) {
            /* Room: the output so far plus a pending space is at most what
             * was consumed plus one, and 16 more input bytes remain. */
            size_t n = fold_block(u + i, out + o + pending);
            if (n) {
                if (pending)
                    out[o++] = ' ';
                pending = false;
                o += n;
                i += n;
                continue;
            }
            /* A leading space: one byte by hand, then blocks again. */
            span = u[i] == ' ' ? 1 : 16;
        }
#endif
        size_t stop = i + span;
        for (; i < stop && ascii_alone(u, len, i); i++) {
            unsigned char ch = ascii_fold[u[i]];
            if (ch == ' ') {
                pending = o + f->dropped > 0;
            } else if (ch) {
                if (pending)
                    out[o++] = ' ';
                pending = false;
                out[o++] = (char)ch;
            }
        }
        if (i < stop)
            break;
    }
    f->len = o;
    f->pending_space = pending;
    *at = i;
    if (i == len || ascii_alone(u, len, i))
        return true;
    size_t j = i + 1;
    while (j < len && !ascii_alone(u, len, j))
        j++;
    *at = j;
    return fold_stretch(f, s + i, j - i);
}

char *vf_fold_text(const char *s, size_t len, size_t *out_len)
{
    if (!s) {
        s = "";
        len = 0;
    }
    folded f = { 0 };
    for (size_t i = 0; i < len;)
        if (!fold_step(&f, s, len, &i, len))
            goto oom;
    if (!reserve(&f, 1))
        goto oom;
    f.buf[f.len] = '\0';
    if (out_len)
        *out_len = f.len;
    return f.buf;
oom:
    free(f.buf);
    return NULL;
}

#define FIRST_WINDOW 1024u

bool vf_fold_contains_window(const char *s, size_t len, const char *fneedle, size_t fn, size_t window,
                             bool *found)
{
    *found = fn == 0;
    if (fn == 0)
        return true;
    if (!s) {
        s = "";
        len = 0;
    }
    if (window < fn)
        window = fn;
    /* Required text is usually near the top: the first windows are small
     * and double up to `window`, so an early match does not fold 64 KiB.
     * Where the windows end changes nothing found (see fold_step). */
    size_t step = window < FIRST_WINDOW ? window : FIRST_WINDOW;
    if (step < fn)
        step = fn;
    folded f = { 0 };
    for (size_t i = 0; i < len && !*found;) {
        if (!fold_step(&f, s, len, &i, step)) {
            free(f.buf);
            return false;
        }
        if (f.len < step && i < len)
            continue;
        *found = memmem(f.buf, f.len, fneedle, fn) != NULL;
        /* A match starting in the last fn - 1 bytes may end in what follows. */
        size_t keep = f.len < fn - 1 ? f.len : fn - 1;
        memmove(f.buf, f.buf + f.len - keep, keep);
        f.dropped += f.len - keep;
        f.len = keep;
        if (step < window)
            step = window - step > step ? 2 * step : window;
    }
    free(f.buf);
    return true;
}

bool vf_fold_contains(const char *s, size_t len, const char *fneedle, size_t fn, bool *found)
{
    return vf_fold_contains_window(s, len, fneedle, fn, 64u * 1024u, found);
}
