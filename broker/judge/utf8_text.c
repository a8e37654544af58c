/* UTF-8 hygiene for text that came from a hostile worker.
 *
 * Decoding follows RFC 3629 strictly (no overlongs, no surrogates, nothing
 * above U+10FFFF) and replaces each "maximal subpart" of an ill-formed
 * sequence with one U+FFFD, as the Unicode standard recommends, so a
 * truncated 4-byte sequence costs one replacement, not four. */
#include "broker/judge/utf8_text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/text_simd.h"

static const char replacement[3] = {(char)0xEF, (char)0xBF, (char)0xBD};

/* Length of the well-formed sequence starting at s[0] (1..4), or 0 when it is
 * ill-formed; *bad gets the length of the maximal subpart to replace then. */
static size_t utf8_sequence(const unsigned char *s, size_t avail, size_t *bad)
{
    unsigned char b = s[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF; /* range allowed for the second byte */

    if (b < 0x80)
        return 1;
    if (b >= 0xC2 && b <= 0xDF) {
        need = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
        need = 3;
        if (b == 0xE0)
            lo = 0xA0; /* overlong below U+0800 */
        else if (b == 0xED)
            hi = 0x9F; /* UTF-16 surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 4;
        if (b == 0xF0)
            lo = 0x90; /* overlong below U+10000 */
        else if (b == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else {
        *bad = 1; /* continuation byte, C0/C1 overlong lead, or F5..FF */
        return 0;
    }
    size_t k = 1;
    for (; k < need && k < avail; k++) {
        unsigned char c = s[k];
        unsigned char min = k == 1 ? lo : 0x80, max = k == 1 ? hi : 0xBF;
        if (c < min || c > max)
            break;
    }
    if (k == need)
        return need;
    *bad = k;
    return 0;
}

/* Make room for n more bytes plus the terminator. Output can only outgrow
 * the input through replacements (3 bytes for as little as 1). */
static bool reserve(char **out, size_t *cap, size_t used, size_t n)
{
    if (n <= *cap - used - 1)
        return true;
    if (n > SIZE_MAX / 2 - used)
        return false;
    size_t want = *cap * 2 > used + n + 1 ? *cap * 2 : used + n + 1;
    char *grown = realloc(*out, want);
    if (!grown)
        return false;
    *out = grown;
    *cap = want;
    return true;
}

char *vf_utf8_sanitize(const char *in, size_t len, size_t *out_len)
{
    const unsigned char *s = (const unsigned char *)in;
    if (!s)
        len = 0;
    if (len > SIZE_MAX / 2)
        return NULL;
    /* Valid text (the common case) needs exactly len + 1 bytes. */
    size_t cap = len + 1, o = 0, i = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    while (i < len) {
        /* ASCII runs are copied without decoding. */
        size_t run = i;
        while (run < len && s[run] < 0x80 && s[run] != 0)
            run++;
        const void *src = s + i;
        size_t take = run - i, emit = take;
        if (take == 0 && s[i] == 0) { /* NUL cannot travel through C strings */
            i++;
            continue;
        }
        if (take == 0) {
            size_t bad = 0;
            take = emit = utf8_sequence(s + i, len - i, &bad);
            if (take == 0) {
                src = replacement;
                emit = sizeof replacement;
                take = bad;
            }
        }
        if (!reserve(&out, &cap, o, emit)) {
            free(out);
            return NULL;
        }
        memcpy(out + o, src, emit);
        o += emit;
        i += take;
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}

bool vf_utf8_is_clean(const char *in, size_t len)
{
    const unsigned char *s = (const unsigned char *)in;
    if (!s)
        return len == 0;
    const uint64_t ones = UINT64_C(0x0101010101010101), high = UINT64_C(0x8080808080808080);
    size_t i = 0;
    while (i < len) {
        /* ASCII without NUL, sixteen or eight bytes at a time. */
#if VF_TEXT_SIMD
        while (len - i >= 16 && !vf_simd_not_ascii_or_nul_mask(s + i))
            i += 16;
#endif
        while (len - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if ((w & high) || ((w - ones) & ~w & high))
                break;
            i += 8;
        }
        if (i == len)
            break;
        if (s[i] == 0)
            return false;
        size_t bad = 0, n = utf8_sequence(s + i, len - i, &bad);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

int vf_utf8_sanitize_in_place(char **text, size_t *len)
{
    if (*text && vf_utf8_is_clean(*text, *len))
        return 0;
    size_t clean_len = 0;
    char *clean = vf_utf8_sanitize(*text, *len, &clean_len);
    if (!clean)
        return -1;
    free(*text);
    *text = clean;
    *len = clean_len;
    return 0;
}

size_t vf_utf8_count(const char *s, size_t len)
{
    /* In valid UTF-8 every code point has exactly one non-continuation byte,
     * so count continuation bytes (10xxxxxx) and subtract. Eight bytes at a
     * time: each byte lane of `lanes` collects 0/1 flags, and is folded into
     * the total before a lane can overflow (255 steps). */
    const unsigned char *p = (const unsigned char *)s;
    if (!p)
        return 0;
    const uint64_t even = UINT64_C(0x00FF00FF00FF00FF);
    size_t cont = 0, i = 0;
#if VF_TEXT_SIMD
    cont = vf_simd_count_continuations(p, len / 16);
    i = len / 16 * 16;
#endif
    while (len - i >= 8) {
        uint64_t lanes = 0;
        for (int step = 0; step < 255 && len - i >= 8; step++, i += 8) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            lanes += vf_utf8_cont_lanes(w);
        }
        uint64_t pairs = (lanes & even) + ((lanes >> 8) & even);
        cont += (size_t)((pairs * UINT64_C(0x0001000100010001)) >> 48);
    }
    for (; i < len; i++)
        cont += (p[i] & 0xC0) == 0x80;
    return len - cont;
}
