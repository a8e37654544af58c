#include "worker/content/charset.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <stdio.h>
#include <unicode/ucnv.h>
#include <unicode/udata.h>

#include "worker/content/charset_labels.h"
#include "worker/content/text_buf.h"

/* windows-1252 0x80..0x9F; the five holes map to the C1 code point, as WHATWG does. */
static const uint16_t cp1252_c1[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
};

const char *vf_charset_name(vf_charset cs)
{
    for (size_t i = 0; i < vf_n_encodings; i++)
        if (vf_encodings[i].cs == cs)
            return vf_encodings[i].name;
    return "utf-8";
}

int vf_charset_warm_up(char *err, size_t errlen)
{
    UErrorCode e = U_ZERO_ERROR;
    udata_setFileAccess(UDATA_ONLY_PACKAGES, &e);
    for (size_t i = 0; i < vf_n_encodings; i++) {
        if (!vf_encodings[i].icu)
            continue;
        e = U_ZERO_ERROR;
        UConverter *c = ucnv_open(vf_encodings[i].icu, &e);
        if (!c || U_FAILURE(e)) {
            snprintf(err, errlen, "ICU has no converter for %s: %s", vf_encodings[i].name,
                     u_errorName(e));
            return -1;
        }
        ucnv_close(c);
    }
    return 0;
}

/* Is the n-byte label one of the space-separated words of list? */
static bool label_in(const char *list, const char *label, size_t n)
{
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, " ");
        if (k == n && strncasecmp(p, label, n) == 0)
            return true;
        p += k;
        while (*p == ' ')
            p++;
    }
    return false;
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
    for (size_t i = 0; i < vf_n_encodings; i++)
        if (label_in(vf_encodings[i].labels, label, n))
            return vf_encodings[i].cs;
    return VF_CS_UNKNOWN; /* unknown, or a "replacement" label */
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

/* encoding="..." of an XML declaration that opens the body (XHTML, XML). */
static bool find_xml_encoding(const char *s, size_t n, const char **label, size_t *label_len)
{
    if (n < 6 || strncmp(s, "<?xml", 5) != 0 || !is_blank((unsigned char)s[5]))
        return false;
    const char *end = memmem(s, n, "?>", 2);
    size_t decl = end ? (size_t)(end - s) : n;
    static const char key[] = "encoding";
    for (size_t i = 5; i + sizeof key - 1 < decl; i++) {
        if (strncmp(s + i, key, sizeof key - 1) != 0 || !is_blank((unsigned char)s[i - 1]))
            continue;
        size_t j = i + sizeof key - 1;
        while (j < decl && is_blank((unsigned char)s[j]))
            j++;
        if (j >= decl || s[j] != '=')
            return false;
        j++;
        while (j < decl && is_blank((unsigned char)s[j]))
            j++;
        if (j >= decl || (s[j] != '"' && s[j] != '\''))
            return false;
        char quote = s[j++];
        size_t start = j;
        while (j < decl && s[j] != quote)
            j++;
        if (j >= decl || j == start)
            return false;
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

/* End of the run from i that decodes to itself: valid UTF-8, no NUL. At
 * its end (before len) *k is the length of the sequence that stopped it
 * (0: invalid) and *cp its code point. */
static size_t clean_run_end(const unsigned char *in, size_t len, size_t i, size_t *k, uint32_t *cp)
{
    size_t run = i;
    *k = 0;
    *cp = 0;
    while (run < len) {
        run += plain_ascii_prefix(in + run, len - run);
        if (run == len)
            break;
        *k = utf8_seq_len(in + run, len - run, cp);
        if (!*k || *cp == 0)
            break;
        run += *k;
    }
    return run;
}

static bool is_valid_utf8(const unsigned char *s, size_t n)
{
    size_t k;
    uint32_t cp;
    /* A run stops at a NUL (valid, one byte: k is 1) or an invalid sequence (k is 0). */
    for (size_t i = clean_run_end(s, n, 0, &k, &cp); i < n; i = clean_run_end(s, n, i + k, &k, &cp))
        if (!k)
            return false;
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

/* Copies a label for a report: printable ASCII only, cut to fit. */
static void keep_label(const char *label, size_t n, char *out, size_t outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < outlen && o < 40; i++) {
        unsigned char c = (unsigned char)label[i];
        out[o++] = (c > 0x20 && c < 0x7F && c != '\'' && c != '"') ? (char)c : '?';
    }
    out[o] = '\0';
}

/* The label inside a Content-Type value, trimmed like vf_charset_from_label. */
static bool ctype_label(const char *ctype, const char **label, size_t *n)
{
    const char *params = ctype ? strchr(ctype, ';') : NULL;
    return params && find_charset_param(params, strlen(params), label, n);
}

vf_charset vf_charset_detect_strict(const unsigned char *body, size_t len, const char *ctype,
                                    int is_html, char *bad_label, size_t bad_len)
{
    if (bad_len)
        bad_label[0] = '\0';
    size_t bom_len;
    vf_charset cs = bom_charset(body, len, &bom_len);
    if (cs != VF_CS_UNKNOWN)
        return cs;
    const char *label;
    size_t n;
    if (ctype_label(ctype, &label, &n)) {
        cs = vf_charset_from_label(label, n);
        if (cs != VF_CS_UNKNOWN)
            return cs;
        if (bad_len) {
            keep_label(label, n, bad_label, bad_len);
            return VF_CS_UNKNOWN;
        }
    }
    /* In the document: an XML declaration (XHTML, XML), else an HTML <meta>. */
    size_t head = len < 1024 ? len : 1024;
    if (find_xml_encoding((const char *)body, head, &label, &n) ||
        (is_html && find_charset_param((const char *)body, head, &label, &n))) {
        cs = vf_charset_from_label(label, n);
        /* An in-document UTF-16 claim is necessarily wrong (we just read it
         * as ASCII); HTML says to take UTF-8 then. */
        if (cs == VF_CS_UTF16LE || cs == VF_CS_UTF16BE)
            cs = VF_CS_UTF8;
        if (cs != VF_CS_UNKNOWN)
            return cs;
        if (bad_len) {
            keep_label(label, n, bad_label, bad_len);
            return VF_CS_UNKNOWN;
        }
    }
    return is_valid_utf8(body, len) ? VF_CS_UTF8 : VF_CS_WINDOWS_1252;
}

vf_charset vf_charset_detect(const unsigned char *body, size_t len,
                             const char *ctype, int is_html)
{
    return vf_charset_detect_strict(body, len, ctype, is_html, NULL, 0);
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
        size_t k;
        uint32_t cp;
        size_t run = clean_run_end(in, len, i, &k, &cp);
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

static const uint16_t iso_8859_16_high[96] = {
    0x00A0, 0x0104, 0x0105, 0x0141, 0x20AC, 0x201E, 0x0160, 0x00A7, 0x0161, 0x00A9, 0x0218, 0x00AB,
    0x0179, 0x00AD, 0x017A, 0x017B, 0x00B0, 0x00B1, 0x010C, 0x0142, 0x017D, 0x201D, 0x00B6, 0x00B7,
    0x017E, 0x010D, 0x0219, 0x00BB, 0x0152, 0x0153, 0x0178, 0x017C, 0x00C0, 0x00C1, 0x00C2, 0x0102,
    0x00C4, 0x0106, 0x00C6, 0x00C7, 0x00C8, 0x00C9, 0x00CA, 0x00CB, 0x00CC, 0x00CD, 0x00CE, 0x00CF,
    0x0110, 0x0143, 0x00D2, 0x00D3, 0x00D4, 0x0150, 0x00D6, 0x015A, 0x0170, 0x00D9, 0x00DA, 0x00DB,
    0x00DC, 0x0118, 0x021A, 0x00DF, 0x00E0, 0x00E1, 0x00E2, 0x0103, 0x00E4, 0x0107, 0x00E6, 0x00E7,
    0x00E8, 0x00E9, 0x00EA, 0x00EB, 0x00EC, 0x00ED, 0x00EE, 0x00EF, 0x0111, 0x0144, 0x00F2, 0x00F3,
    0x00F4, 0x0151, 0x00F6, 0x015B, 0x0171, 0x00F9, 0x00FA, 0x00FB, 0x00FC, 0x0119, 0x021B, 0x00FF,
};

/* Single-byte encodings decoded here: x-user-defined puts 0x80..0xFF at
 * U+F780..U+F7FF; ISO-8859-16 (absent from ICU's data) by table. */
static void decode_single_byte(vf_tbuf *out, const unsigned char *in, size_t len, vf_charset cs,
                               size_t max_out)
{
    for (size_t i = 0; i < len;) {
        size_t run = i + plain_ascii_prefix(in + i, len - i);
        if (run > i && !put_run(out, in + i, run - i, max_out))
            return;
        if (run == len)
            return;
        unsigned char b = in[run];
        uint32_t cp = b;
        if (cs == VF_CS_X_USER_DEFINED && b >= 0x80)
            cp = 0xF780 + (b - 0x80);
        else if (cs == VF_CS_ISO_8859_16 && b >= 0xA0)
            cp = iso_8859_16_high[b - 0xA0];
        if (!put_cp(out, cp, max_out))
            return;
        i = run + 1;
    }
}

/* Everything else through ICU, in slices, straight to UTF-8; invalid input
 * becomes U+FFFD (ICU's substitution), NULs are then dropped by the UTF-8 pass. */
static bool decode_icu(vf_tbuf *out, const unsigned char *in, size_t len, vf_charset cs,
                       size_t max_out)
{
    const char *name = NULL;
    for (size_t i = 0; i < vf_n_encodings; i++)
        if (vf_encodings[i].cs == cs)
            name = vf_encodings[i].icu;
    UErrorCode e = U_ZERO_ERROR;
    UConverter *cnv = name ? ucnv_open(name, &e) : NULL;
    if (!cnv || U_FAILURE(e)) {
        if (cnv)
            ucnv_close(cnv);
        return false;
    }
    UChar sub[1] = { 0xFFFD };
    e = U_ZERO_ERROR;
    ucnv_setSubstString(cnv, sub, 1, &e);
    e = U_ZERO_ERROR;
    UConverter *utf8 = ucnv_open("UTF-8", &e);
    if (!utf8 || U_FAILURE(e)) {
        ucnv_close(cnv);
        if (utf8)
            ucnv_close(utf8);
        return false;
    }
    char buf[16384];
    UChar pivot[1024];
    UChar *ps = pivot, *pt = pivot;
    const char *src = (const char *)in, *end = (const char *)in + len;
    bool flush_done = false;
    size_t carried = 0; /* bytes of a character split by the last slice */
    while (!flush_done) {
        char *dst = buf + carried;
        e = U_ZERO_ERROR;
        ucnv_convertEx(utf8, cnv, &dst, buf + sizeof buf, &src, end, pivot, &ps, &pt,
                       pivot + sizeof pivot / sizeof pivot[0], false, true, &e);
        if (e != U_BUFFER_OVERFLOW_ERROR)
            flush_done = true;
        if (U_FAILURE(e) && e != U_BUFFER_OVERFLOW_ERROR)
            break;
        size_t n = (size_t)(dst - buf), cut = n;
        if (!flush_done) {
            size_t back = 0;
            while (cut > 0 && back < 3 && ((unsigned char)buf[cut - 1] & 0xC0) == 0x80)
                cut--, back++;
            if (cut > 0 && (unsigned char)buf[cut - 1] >= 0xC0)
                cut--; /* the lead byte of the split character */
            else
                cut = n;
        }
        decode_utf8(out, (const unsigned char *)buf, cut, max_out);
        if (out->len >= max_out || out->oom)
            break;
        carried = n - cut;
        memmove(buf, buf + cut, carried);
    }
    ucnv_close(utf8);
    ucnv_close(cnv);
    return true;
}

char *vf_to_utf8(const unsigned char *in, size_t len, vf_charset cs,
                 size_t max_out, size_t *out_len)
{
    vf_tbuf out;
    vf_tbuf_init(&out, max_out);
    vf_to_utf8_into(in, len, cs, &out);
    return vf_tbuf_take(&out, out_len);
}

bool vf_utf8_as_is(const unsigned char *in, size_t len, vf_charset cs, size_t *skip)
{
    *skip = 0;
    /* The charsets vf_to_utf8_into decodes as UTF-8. */
    if (cs != VF_CS_UTF8 && cs != VF_CS_UNKNOWN && cs != VF_CS_COUNT)
        return false;
    size_t bom_len, from = 0;
    if (bom_charset(in, len, &bom_len) == cs)
        from = bom_len;
    size_t k;
    uint32_t cp;
    if (clean_run_end(in, len, from, &k, &cp) != len)
        return false;
    *skip = from;
    return true;
}

void vf_to_utf8_into(const unsigned char *in, size_t len, vf_charset cs, vf_tbuf *out_buf)
{
    vf_tbuf out = *out_buf;
    size_t max_out = out.limit;
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
    case VF_CS_X_USER_DEFINED:
    case VF_CS_ISO_8859_16:
        decode_single_byte(&out, in, len, cs, max_out);
        break;
    case VF_CS_UTF8:
    case VF_CS_UNKNOWN:
    case VF_CS_COUNT:
        decode_utf8(&out, in, len, max_out);
        break;
    default:
        if (!decode_icu(&out, in, len, cs, max_out))
            decode_utf8(&out, in, len, max_out);
        break;
    }
    *out_buf = out;
}
