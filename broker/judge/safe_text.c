#include "broker/judge/safe_text.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/text_simd.h"

/* Decodes one UTF-8 sequence at s[0..n); returns its length (1 for an
 * invalid byte, with *cp = 0xFFFFFFFF). */
static size_t decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char b = s[0];
    size_t need;
    uint32_t v, min;
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    if (b >= 0xC2 && b <= 0xDF)
        need = 1, v = b & 0x1F, min = 0x80;
    else if (b >= 0xE0 && b <= 0xEF)
        need = 2, v = b & 0x0F, min = 0x800;
    else if (b >= 0xF0 && b <= 0xF4)
        need = 3, v = b & 0x07, min = 0x10000;
    else
        goto bad;
    if (n - 1 < need)
        goto bad;
    for (size_t k = 1; k <= need; k++) {
        if ((s[k] & 0xC0) != 0x80)
            goto bad;
        v = v << 6 | (s[k] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        goto bad;
    *cp = v;
    return need + 1;
bad:
    *cp = 0xFFFFFFFFu;
    return 1;
}

bool vf_model_text_drops(unsigned cp)
{
    if (cp < 0x20)
        return cp != '\n' && cp != '\t';
    return cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || /* DEL, C1 */
           cp == 0x061C ||                              /* Arabic letter mark */
           cp == 0x200E || cp == 0x200F ||              /* LRM, RLM */
           (cp >= 0x202A && cp <= 0x202E) ||            /* embeddings, overrides */
           (cp >= 0x2066 && cp <= 0x2069);              /* isolates */
}

/* Lanes (high bit) of w whose byte equals c: exact per lane, no borrow
 * crosses lanes because the high bits are added apart. */
static inline uint64_t lanes_equal(uint64_t w, unsigned char c)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), low7 = ones * 0x7F;
    uint64_t x = w ^ (ones * c);
    return ~(((x & low7) + low7) | x) & (ones * 0x80);
}

/* Whether the eight bytes at p are all printable ASCII (0x20..0x7E), a line
 * feed or a tab: what text keeps as it is. The usual word is printable and
 * passes the cheap borrow test; a word holding a line break or a tab is
 * then asked exactly, so a page's lines still go a word at a time. */
static bool printable_word(const unsigned char *p)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), high = ones * 0x80, low7 = ones * 0x7F;
    uint64_t w, del;
    memcpy(&w, p, 8);
    del = w ^ (ones * 0x7F);
    if (!((w & high) | ((w - ones * 0x20) & ~w & high) | ((del - ones) & ~del & high)))
        return true;
    uint64_t below20 = ~(((w & low7) + ones * 0x60) | w) & high;
    uint64_t kept = lanes_equal(w, '\n') | lanes_equal(w, '\t');
    return !((w & high) | (below20 & ~kept) | lanes_equal(w, 0x7F));
}

bool vf_model_text_is_clean(const char *in, size_t len)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t i = 0;
    while (i < len) {
#if VF_TEXT_SIMD
        if (len - i >= 16 && !vf_simd_not_plain_text_mask(s + i)) {
            i += 16;
            continue;
        }
#endif
        if (len - i >= 8 && printable_word(s + i)) { /* the common case, a word at a time */
            i += 8;
            continue;
        }
        /* Something in these eight bytes (or the tail) needs a look: they go
         * one code point at a time, so text that is mostly multibyte is not
         * tested as a word again at every byte. */
        size_t stop = len - i >= 8 ? i + 8 : len;
        while (i < stop) {
            if (s[i] >= 0x20 && s[i] < 0x7F) {
                i++;
                continue;
            }
            uint32_t cp;
            size_t n = decode(s + i, len - i, &cp);
            if (cp == '\r' || cp == 0x2028 || cp == 0x2029 || (cp != 0xFFFFFFFFu && vf_model_text_drops(cp)))
                return false;
            i += n;
        }
    }
    return true;
}

size_t vf_model_text_clean_char(const unsigned char *s, size_t len, size_t i, char *out, size_t *o)
{
    uint32_t cp;
    size_t n = decode(s + i, len - i, &cp);
    if (cp == '\r' || cp == 0x2028 || cp == 0x2029) {
        /* CRLF is one break; a lone CR or a separator becomes one too */
        if (!(cp == '\r' && i + 1 < len && s[i + 1] == '\n'))
            out[(*o)++] = '\n';
    } else if (cp == 0xFFFFFFFFu || !vf_model_text_drops(cp)) {
        memcpy(out + *o, s + i, n);
        *o += n;
    }
    return n;
}

char *vf_model_text_clean(const char *in, size_t len, size_t *out_len)
{
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    const unsigned char *s = (const unsigned char *)in;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        /* Printable ASCII, newlines and tabs stay as they are: copied a run
         * at a time (this runs over every page). */
        size_t run = i;
        while (run < len && ((s[run] >= 0x20 && s[run] < 0x7F) || s[run] == '\n' || s[run] == '\t'))
            run++;
        if (run > i) {
            memcpy(out + o, s + i, run - i);
            o += run - i;
            i = run;
            continue;
        }
        i += vf_model_text_clean_char(s, len, i, out, &o);
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}

int vf_model_text_clean_in_place(char **text, size_t *len)
{
    if (vf_model_text_is_clean(*text, *len))
        return 0;
    size_t clean_len = 0;
    char *clean = vf_model_text_clean(*text, *len, &clean_len);
    if (!clean)
        return -1;
    free(*text);
    *text = clean;
    *len = clean_len;
    return 0;
}

/* The printable-ASCII form of the character at s[0..n): its length, with
 * the text in piece (>= 16 bytes); *used gets the input bytes consumed. */
static size_t ascii_piece(const unsigned char *s, size_t n, char *piece, size_t *used)
{
    uint32_t cp;
    *used = decode(s, n, &cp);
    if (cp >= 0x20 && cp < 0x7F && cp != '\\') {
        piece[0] = (char)cp;
        return 1;
    }
    if (cp == '\\') {
        memcpy(piece, "\\\\", 2);
        return 2;
    }
    if (cp == 0xFFFFFFFFu || cp < 0x80)
        return (size_t)snprintf(piece, 16, "\\x%02X", s[0]);
    return (size_t)snprintf(piece, 16, "\\u{%X}", (unsigned)cp);
}

void vf_ascii_line(const char *in, size_t len, char *out, size_t out_len)
{
    if (!out || out_len == 0)
        return;
    const unsigned char *s = (const unsigned char *)in;
    size_t room = out_len - 1, total = 0, used;
    char piece[16];
    for (size_t i = 0; i < len && total <= room; i += used)
        total += ascii_piece(s + i, len - i, piece, &used);
    /* Whole pieces only; when it does not all fit, keep room for "...". */
    size_t limit = total <= room ? room : room >= 3 ? room - 3 : 0, o = 0;
    for (size_t i = 0; i < len; i += used) {
        size_t plen = ascii_piece(s + i, len - i, piece, &used);
        if (o + plen > limit)
            break;
        memcpy(out + o, piece, plen);
        o += plen;
    }
    if (total > room && room >= 3) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}
