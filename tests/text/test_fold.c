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
    size_t np = sizeof pieces / sizeof pieces[0];
    uint32_t x = 2463534242u;
    char buf[1024];
    for (int round = 0; round < 30000; round++) {
        size_t o = 0;
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        size_t k = x % 24;
        for (size_t p = 0; p < k; p++) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            /* Mostly ASCII, as real text is. */
            const char *piece = x % 3 ? pieces[x % 41] : pieces[x % np];
            size_t n = strlen(piece);
            memcpy(buf + o, piece, n);
            o += n;
        }
        same(buf, o);
    }
}
