#include "worker/content/charset.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "worker/content/text_buf.h"

/* windows-1252 0x80..0x9F; the five holes map to the C1 code point, as WHATWG does. */
static const uint16_t cp1252_c1[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
};

static const struct {
    const char *label;
    vf_charset cs;
} labels[] = {
    {"utf-8", VF_CS_UTF8}, {"utf8", VF_CS_UTF8}, {"unicode-1-1-utf-8", VF_CS_UTF8},
    {"windows-1252", VF_CS_WINDOWS_1252}, {"cp1252", VF_CS_WINDOWS_1252},
    {"x-cp1252", VF_CS_WINDOWS_1252}, {"iso-8859-1", VF_CS_WINDOWS_1252},
    {"iso8859-1", VF_CS_WINDOWS_1252}, {"iso_8859-1", VF_CS_WINDOWS_1252},
    {"iso88591", VF_CS_WINDOWS_1252}, {"iso_8859-1:1987", VF_CS_WINDOWS_1252},
    {"latin1", VF_CS_WINDOWS_1252}, {"l1", VF_CS_WINDOWS_1252},
    {"ascii", VF_CS_WINDOWS_1252}, {"us-ascii", VF_CS_WINDOWS_1252},
    {"ansi_x3.4-1968", VF_CS_WINDOWS_1252}, {"iso-ir-100", VF_CS_WINDOWS_1252},
    {"cp819", VF_CS_WINDOWS_1252}, {"ibm819", VF_CS_WINDOWS_1252},
    {"csisolatin1", VF_CS_WINDOWS_1252},
    {"utf-16", VF_CS_UTF16LE}, {"utf-16le", VF_CS_UTF16LE}, {"ucs-2", VF_CS_UTF16LE},
    {"utf-16be", VF_CS_UTF16BE},
};

const char *vf_charset_name(vf_charset cs)
{
    switch (cs) {
    case VF_CS_UTF8: return "utf-8";
    case VF_CS_WINDOWS_1252: return "windows-1252";
    case VF_CS_UTF16LE: return "utf-16le";
    case VF_CS_UTF16BE: return "utf-16be";
    case VF_CS_UNKNOWN: break;
    }
    return "utf-8";
}

static bool is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

vf_charset vf_charset_from_label(const char *label, size_t n)
{
    while (n && (is_blank((unsigned char)*label) || *label == '"' || *label == '\'')) {
        label++;
        n--;
    }
    while (n && (is_blank((unsigned char)label[n - 1]) || label[n - 1] == '"' ||
                 label[n - 1] == '\''))
        n--;
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        if (strlen(labels[i].label) == n && strncasecmp(labels[i].label, label, n) == 0)
            return labels[i].cs;
    return VF_CS_UNKNOWN;
}

/* Finds "charset" in [s, s+n) and returns the label after '=' (quotes and
 * blanks skipped) via label and label_len. */
static bool find_charset_param(const char *s, size_t n, const char **label, size_t *label_len)
{
    static const char key[] = "charset";
    const size_t klen = sizeof key - 1;
    for (size_t i = 0; i + klen <= n; i++) {
        if (strncasecmp(s + i, key, klen) != 0)
            continue;
        size_t j = i + klen;
        while (j < n && is_blank((unsigned char)s[j]))
            j++;
        if (j >= n || s[j] != '=')
            continue;
        j++;
        while (j < n && (is_blank((unsigned char)s[j]) || s[j] == '"' || s[j] == '\''))
            j++;
        size_t start = j;
        while (j < n && !is_blank((unsigned char)s[j]) && s[j] != '"' && s[j] != '\'' &&
               s[j] != ';' && s[j] != '>' && s[j] != '/' && s[j] != ',')
            j++;
        if (j == start)
            continue;
        *label = s + start;
        *label_len = j - start;
        return true;
    }
    return false;
}

vf_charset vf_charset_from_content_type(const char *ctype)
{
    const char *label;
    size_t n;
    if (!ctype)
        return VF_CS_UNKNOWN;
    const char *params = strchr(ctype, ';');
    if (!params || !find_charset_param(params, strlen(params), &label, &n))
        return VF_CS_UNKNOWN;
    return vf_charset_from_label(label, n);
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid. Rejects
 * overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_seq_len(const unsigned char *p, size_t avail, uint32_t *cp)
{
    unsigned char c = p[0];
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        n = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

/* Bytes from s that are ASCII and not NUL, eight at a time: pages are mostly
 * that, and a byte-by-byte walk showed in the worker's profile. */
static size_t plain_ascii_prefix(const unsigned char *s, size_t n)
{
    const uint64_t high = 0x8080808080808080ull, low = 0x0101010101010101ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, s + i, sizeof v);
        if ((v & high) || ((v - low) & ~v & high)) /* a high bit, or a zero byte */
            break;
    }
    while (i < n && s[i] != 0 && s[i] < 0x80)
        i++;
    return i;
}

static bool is_valid_utf8(const unsigned char *s, size_t n)
{
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        i += plain_ascii_prefix(s + i, n - i);
        if (i == n)
            break;
        if (s[i] == 0) {
            i++;
            continue;
        }
        size_t k = utf8_seq_len(s + i, n - i, &cp);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

static vf_charset bom_charset(const unsigned char *b, size_t n, size_t *bom_len)
{
    *bom_len = 0;
    if (n >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF)
        return *bom_len = 3, VF_CS_UTF8;
    if (n >= 2 && b[0] == 0xFF && b[1] == 0xFE)
        return *bom_len = 2, VF_CS_UTF16LE;
    if (n >= 2 && b[0] == 0xFE && b[1] == 0xFF)
        return *bom_len = 2, VF_CS_UTF16BE;
    return VF_CS_UNKNOWN;
}

vf_charset vf_charset_detect(const unsigned char *body, size_t len,
                             const char *ctype, int is_html)
{
    size_t bom_len;
    vf_charset cs = bom_charset(body, len, &bom_len);
    if (cs != VF_CS_UNKNOWN)
        return cs;
    cs = vf_charset_from_content_type(ctype);
    if (cs != VF_CS_UNKNOWN)
        return cs;
    if (is_html) {
        const char *label;
        size_t n;
        if (find_charset_param((const char *)body, len < 1024 ? len : 1024, &label, &n)) {
            cs = vf_charset_from_label(label, n);
            /* An in-document UTF-16 claim is necessarily wrong (we just read it
             * as ASCII); HTML says to take UTF-8 then. */
            if (cs == VF_CS_UTF16LE || cs == VF_CS_UTF16BE)
                cs = VF_CS_UTF8;
            if (cs != VF_CS_UNKNOWN)
                return cs;
        }
    }
    return is_valid_utf8(body, len) ? VF_CS_UTF8 : VF_CS_WINDOWS_1252;
}

/* Appends code point cp unless that would pass max_out; returns false when full. */
static bool put_cp(vf_tbuf *out, uint32_t cp, size_t max_out)
{
    char u[4];
    size_t n;
    if (cp == 0)
        return true; /* NUL bytes never leave the worker */
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    if (out->len + n > max_out)
        return false;
    return vf_tbuf_append(out, u, n);
}

/* Appends in[0..n), bytes that are already valid UTF-8 without NUL, cut on a
 * character boundary at max_out. Returns false when full. Pages are mostly
 * such runs; copying them whole instead of a code point at a time is what
 * keeps decoding off the worker's profile. */
static bool put_run(vf_tbuf *out, const unsigned char *in, size_t n, size_t max_out)
{
    size_t room = max_out - out->len;
    bool fits = n <= room;
    if (!fits) {
        n = room;
        while (n > 0 && (in[n] & 0xC0) == 0x80)
            n--;
    }
    if (n > 0 && !vf_tbuf_append(out, (const char *)in, n))
        return false;
    return fits;
}

static void decode_utf8(vf_tbuf *out, const unsigned char *in, size_t len, size_t max_out)
{
    for (size_t i = 0; i < len;) {
        size_t run = i;
        uint32_t cp = 0;
        size_t k = 0;
        while (run < len) {
            run += plain_ascii_prefix(in + run, len - run);
            if (run == len)
                break;
            k = utf8_seq_len(in + run, len - run, &cp);
            if (!k || cp == 0)
                break;
            run += k;
        }
        if (run > i && !put_run(out, in + i, run - i, max_out))
            return;
        if (run == len)
            return;
        /* An invalid byte becomes U+FFFD; a NUL is dropped (put_cp). */
        if (!k)
            cp = 0xFFFD, k = 1;
        if (!put_cp(out, cp, max_out))
            return;
        i = run + k;
    }
}

static void decode_1252(vf_tbuf *out, const unsigned char *in, size_t len, size_t max_out)
{
    for (size_t i = 0; i < len;) {
        size_t run = i + plain_ascii_prefix(in + i, len - i);
        if (run > i && !put_run(out, in + i, run - i, max_out))
            return;
        if (run == len)
            return;
        uint32_t cp = in[run] >= 0x80 && in[run] < 0xA0 ? cp1252_c1[in[run] - 0x80] : in[run];
        if (!put_cp(out, cp, max_out))
            return;
        i = run + 1;
    }
}

static void decode_utf16(vf_tbuf *out, const unsigned char *in, size_t len, bool big,
                         size_t max_out)
{
    size_t i = 0;
    while (i + 1 < len) {
        uint32_t u = big ? (uint32_t)in[i] << 8 | in[i + 1] : (uint32_t)in[i + 1] << 8 | in[i];
        i += 2;
        if (u >= 0xD800 && u <= 0xDBFF && i + 1 < len) {
            uint32_t lo = big ? (uint32_t)in[i] << 8 | in[i + 1]
                              : (uint32_t)in[i + 1] << 8 | in[i];
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                i += 2;
            }
        }
        if (u >= 0xD800 && u <= 0xDFFF)
            u = 0xFFFD; /* unpaired surrogate */
        if (!put_cp(out, u, max_out))
            return;
    }
    if (i < len)
        put_cp(out, 0xFFFD, max_out); /* odd trailing byte */
}

char *vf_to_utf8(const unsigned char *in, size_t len, vf_charset cs,
                 size_t max_out, size_t *out_len)
{
    vf_tbuf out;
    vf_tbuf_init(&out, max_out);
    size_t bom_len;
    vf_charset bom = bom_charset(in, len, &bom_len);
    if (bom == cs) {
        in += bom_len;
        len -= bom_len;
    }
    switch (cs) {
    case VF_CS_WINDOWS_1252:
        decode_1252(&out, in, len, max_out);
        break;
    case VF_CS_UTF16LE:
    case VF_CS_UTF16BE:
        decode_utf16(&out, in, len, cs == VF_CS_UTF16BE, max_out);
        break;
    case VF_CS_UTF8:
    case VF_CS_UNKNOWN:
        decode_utf8(&out, in, len, max_out);
        break;
    }
    return vf_tbuf_take(&out, out_len);
}
