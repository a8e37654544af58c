/* vf_fold_text against the whole-string utf8proc mapping it replaced (kept
 * here as the reference): byte-identical output on every built-in wall
 * phrase, on hand-picked edge cases where ASCII meets what composes,
 * reorders or repairs, and on many random mixtures of those pieces. The
 * ASCII fast path must be an optimisation only. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "broker/judge/text_fold.h"
#include "broker/judge/wall_phrases.h"

/* The mapping as it was: repair, one utf8proc call over everything, collapse. */
static char *ref_fold(const char *s, size_t len, size_t *out_len)
{
    uint8_t *fixed = malloc(len * 3 + 1);
    size_t o = 0, i = 0;
    while (i < len) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate((const uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &cp);
        if (n <= 0 || cp == 0) {
            memcpy(fixed + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
            continue;
        }
        memcpy(fixed + o, s + i, (size_t)n);
        o += (size_t)n;
        i += (size_t)n;
    }
    fixed[o] = '\0';
    uint8_t *mapped = NULL;
    utf8proc_ssize_t n = utf8proc_map_custom(
        fixed, (utf8proc_ssize_t)o, &mapped,
        UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD | UTF8PROC_IGNORE |
            UTF8PROC_LUMP | UTF8PROC_STRIPCC,
        vf_fold_punct, NULL);
    free(fixed);
    cr_assert_geq(n, 0);
    size_t w = 0;
    int pending = 0;
    for (utf8proc_ssize_t k = 0; k < n; k++) {
        if (mapped[k] == ' ') {
            pending = w > 0;
            continue;
        }
        if (pending)
            mapped[w++] = ' ';
        pending = 0;
        mapped[w++] = mapped[k];
    }
    mapped[w] = '\0';
    *out_len = w;
    return (char *)mapped;
}

static void hex(const char *s, size_t n, char *out, size_t outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 3 < outlen; i++)
        o += (size_t)snprintf(out + o, outlen - o, "%02x", (unsigned char)s[i]);
    out[o] = '\0';
}

static void same(const char *s, size_t len)
{
    size_t rn = 0, fn = 12345;
    char *r = ref_fold(s, len, &rn);
    char *f = vf_fold_text(s, len, &fn);
    cr_assert_not_null(f);
    char in[512];
    hex(s, len, in, sizeof in);
    cr_assert(rn == fn && memcmp(r, f, rn) == 0 && f[fn] == '\0', "input %s: got '%s', want '%s'", in, f, r);
    free(r);
    free(f);
}

Test(fold, wall_phrases_fold_as_before)
{
    for (size_t i = 0; i < vf_wall_phrase_count(); i++) {
        const char *p = vf_wall_phrase_at(i)->phrase;
        same(p, strlen(p));
    }
}

/* Pieces where a byte-level shortcut could go wrong. */
static const char *const pieces[] = {
    "a", "Z", "Q", "7", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\x01", "\x1f", "\x7f",
    "-", "'", "\"", "<", "=", ">", "_", "~", "^", "`", "|", "/", ":", "\\",
    "e", "E", "i", "I", "s", "S", "k", "K", "n", "o", "A", "u",
    "\xcc\x81",             /* U+0301 combining acute: composes with a preceding e */
    "\xcc\xb8",             /* U+0338 combining long solidus: < + it = U+226E */
    "\xcc\xa3",             /* U+0323 combining dot below: reorders before U+0301 */
    "\xcd\x85",             /* U+0345 ypogegrammeni: case folds to iota */
    "\xc3\xa9", "\xc3\x89", /* é É */
    "\xc3\x9f",             /* ß -> ss */
    "\xc4\xb0",             /* İ */
    "\xcf\x82", "\xce\xa3", /* ς Σ */
    "\xef\xac\x81",         /* ﬁ ligature -> fi */
    "\xef\xbc\xa1",         /* fullwidth A */
    "\xe2\x80\x99", "\xe2\x80\x9c", "\xe2\x80\x94", "\xe2\x88\x92", /* ’ “ — − */
    "\xc2\xa0", "\xe2\x80\x83", "\xe3\x80\x80",                     /* nbsp, em space, ideographic space */
    "\xc2\xad", "\xe2\x80\x8b", "\xe2\x80\x8d", "\xef\xbb\xbf",     /* soft hyphen, zwsp, zwj, bom */
    "\xc2\x85", "\xe2\x80\xa8", "\xc2\x80", "\xc2\x9f",             /* NEL, LS, C1 controls */
    "\xe1\x84\x80", "\xe1\x85\xa1", "\xe1\x86\xa8", "\xea\xb0\x80", /* Hangul L V T, LV */
    "\xef\xb7\xba",         /* U+FDFA: 18 code points under NFKC */
    "\xe2\x84\xab",         /* angstrom sign -> å */
    "\xe0\xa5\x98",         /* U+0958, composition-excluded */
    "\xf0\x9f\x98\x80",     /* emoji */
    "\xe6\x97\xa5\xe6\x9c\xac", /* CJK */
    "\xc3", "\x80", "\xff", "\xe2\x80", "\xf0\x9f\x98", "\xed\xa0\x80", "\xc0\xaf", /* invalid */
};

/* A random run of min_pieces to min_pieces + 23 pieces into buf (room for
 * 24 of the longest), mostly ASCII as real text is; returns its length. */
static size_t mixture(uint32_t *x, size_t min_pieces, char *buf)
{
    size_t np = sizeof pieces / sizeof pieces[0], o = 0;
    *x ^= *x << 13, *x ^= *x >> 17, *x ^= *x << 5;
    size_t k = min_pieces + *x % 24;
    for (size_t p = 0; p < k; p++) {
        *x ^= *x << 13, *x ^= *x >> 17, *x ^= *x << 5;
        const char *piece = *x % 3 ? pieces[*x % 41] : pieces[*x % np];
        size_t n = strlen(piece);
        memcpy(buf + o, piece, n);
        o += n;
    }
    return o;
}

Test(fold, edge_cases_fold_as_before)
{
    size_t np = sizeof pieces / sizeof pieces[0];
    for (size_t i = 0; i < np; i++) {
        same(pieces[i], strlen(pieces[i]));
        for (size_t j = 0; j < np; j++) {
            char buf[64];
            int n = snprintf(buf, sizeof buf, "%s%s", pieces[i], pieces[j]);
            same(buf, (size_t)n);
            n = snprintf(buf, sizeof buf, "x%sy%sz", pieces[i], pieces[j]);
            same(buf, (size_t)n);
        }
    }
    const char nul[] = "ab\0c\xcc\x81\0";
    same(nul, sizeof nul - 1);
    same("", 0);
    size_t n = 0;
    char *empty = vf_fold_text(NULL, 5, &n);
    cr_assert(empty && n == 0 && empty[0] == '\0');
    free(empty);
}

Test(fold, random_mixtures_fold_as_before)
{
    uint32_t x = 2463534242u;
    char buf[1024];
    for (int round = 0; round < 30000; round++) {
        size_t o = mixture(&x, 0, buf);
        same(buf, o);
    }
}

/* must_contain's windowed search (vf_fold_contains) finds exactly what
 * memmem finds in the whole folded text, with windows small enough that
 * matches straddle every boundary, on the same mixtures and needles cut
 * from their own folded form. */
static void same_search(const char *s, size_t len, const char *needle, size_t needle_len)
{
    size_t fn = 0, ft = 0;
    char *fneedle = vf_fold_text(needle, needle_len, &fn);
    char *whole = vf_fold_text(s, len, &ft);
    bool want = fn == 0 || memmem(whole, ft, fneedle, fn) != NULL;
    static const size_t windows[] = { 1, 2, 3, 5, 8, 17, 64, 64u * 1024u };
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
        bool found = !want;
        cr_assert(vf_fold_contains_window(s, len, fneedle, fn, windows[w], &found));
        cr_assert_eq(found, want, "window %zu, needle '%s' in '%s': %d, whole-text search: %d", windows[w],
                     fneedle, whole, found, want);
    }
    free(fneedle);
    free(whole);
}

Test(fold, windowed_search_finds_what_the_whole_text_search_finds)
{
    size_t np = sizeof pieces / sizeof pieces[0];
    uint32_t x = 88172645u;
    char buf[1024];
    unsigned hits = 0, misses = 0;
    for (int round = 0; round < 6000; round++) {
        size_t o = mixture(&x, 1, buf);
        /* a needle from the text itself (usually found), or a random piece pair */
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        size_t from = o ? x % o : 0, n = o ? 1 + (x >> 8) % (o - from) : 0;
        char needle[64];
        if (x % 4) {
            n = n < sizeof needle - 1 ? n : sizeof needle - 1;
            memcpy(needle, buf + from, n);
        } else {
            n = (size_t)snprintf(needle, sizeof needle, "%s%s", pieces[x % np], pieces[(x >> 4) % np]);
        }
        needle[n] = '\0';
        size_t fn = 0, ft = 0;
        char *fneedle = vf_fold_text(needle, n, &fn);
        char *whole = vf_fold_text(buf, o, &ft);
        if (fn == 0 || memmem(whole, ft, fneedle, fn))
            hits++;
        else
            misses++;
        free(fneedle);
        free(whole);
        same_search(buf, o, needle, n);
    }
    cr_assert_gt(hits, 1000);
    cr_assert_gt(misses, 500);
    /* spaces collapse across a window boundary: "a   b" is "a b" whatever the cut */
    same_search("x a     b y", 11, "a b", 3);
    same_search("   lead", 7, " lead", 5);
    same_search("", 0, "", 0);
    same_search("", 0, "a", 1);
}

/* Prose-like text: long printable runs with single and double spaces, case,
 * punctuation, line breaks, tabs, controls and now and then a character
 * that composes or lumps, so the 16-byte blocks (and every way they are
 * turned down) meet every alignment. */
Test(fold, long_prose_folds_as_before)
{
    static const char *const bits[] = { " ", "  ", "\t", "\n", ".", "A", "Z", "@", "[", "`", "{", "~",
                                        "\x7f", "\x01", "e\xcc\x81", "\xc3\x89", "\xe2\x80\x99", ">\xcc\xb8" };
    uint32_t x = 362436069u;
    char buf[600];
    for (int round = 0; round < 4000; round++) {
        size_t o = 0;
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        size_t want = 17 + x % 500;
        while (o + 8 < want) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            if (x % 5) {
                buf[o++] = (char)((x >> 8) % 2 ? 'a' + (x >> 9) % 26 : 'A' + (x >> 9) % 26);
            } else {
                const char *b = bits[(x >> 8) % ((x >> 16) % 4 ? 2 : sizeof bits / sizeof bits[0])];
                memcpy(buf + o, b, strlen(b));
                o += strlen(b);
            }
        }
        same(buf, o);
    }
}
