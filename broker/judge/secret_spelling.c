#include "broker/judge/secret_spelling.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <utf8proc.h>

#include "policy/hex_digit.h"

/* ---- characters whose compatibility decomposition is one ASCII byte ---- */

typedef struct {
    uint32_t cp;
    unsigned char ascii;
} compat_entry;

/* Unicode 15 has about 1,100 such characters below U+20000. */
#define COMPAT_MAX 4096
static compat_entry compat[COMPAT_MAX];
static size_t n_compat;
static pthread_once_t compat_once = PTHREAD_ONCE_INIT;

static void compat_build(void)
{
    for (uint32_t cp = 0x80; cp < 0x20000 && n_compat < COMPAT_MAX; cp++) {
        utf8proc_int32_t dst[4];
        int boundclass = 0;
        utf8proc_ssize_t r = utf8proc_decompose_char((utf8proc_int32_t)cp, dst, 4,
                                                      UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT, &boundclass);
        if (r == 1 && dst[0] >= 0x20 && dst[0] <= 0x7E)
            compat[n_compat++] = (compat_entry){ cp, (unsigned char)dst[0] };
    }
}

/* The ASCII byte cp stands for under NFKC, or -1. */
static int compat_ascii(uint32_t cp)
{
    pthread_once(&compat_once, compat_build);
    size_t lo = 0, hi = n_compat;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (compat[mid].cp == cp)
            return compat[mid].ascii;
        if (compat[mid].cp < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static bool spells(uint32_t cp, unsigned char b)
{
    return cp == b || (cp >= 0x80 && compat_ascii(cp) == b);
}

/* ---- escapes ---- */

/* n hex digits at t as a number, or -1. */
static long hex_n(const unsigned char *t, size_t avail, size_t n)
{
    if (avail < n)
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        int h = vf_hex_digit(t[i]);
        if (h < 0)
            return -1;
        v = v << 4 | h;
    }
    return v;
}

/* \uXXXX, with a UTF-16 surrogate pair read as one character. */
static size_t json_escape(const unsigned char *t, size_t avail, uint32_t *cp)
{
    long hi = avail >= 2 && t[0] == '\\' && t[1] == 'u' ? hex_n(t + 2, avail - 2, 4) : -1;
    if (hi < 0)
        return 0;
    *cp = (uint32_t)hi;
    if (hi >= 0xD800 && hi <= 0xDBFF && avail >= 12 && t[6] == '\\' && t[7] == 'u') {
        long lo = hex_n(t + 8, avail - 8, 4);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            *cp = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
            return 12;
        }
    }
    return 6;
}

#define ENTITY_DIGITS_MAX 8 /* leading zeros included: bounds the work per position */

/* &#DDD; or &#xHHH; (';' optional). */
static size_t numeric_entity(const unsigned char *t, size_t avail, uint32_t *cp)
{
    if (avail < 3 || t[0] != '&' || t[1] != '#')
        return 0;
    bool hex = t[2] == 'x' || t[2] == 'X';
    size_t i = hex ? 3 : 2, digits = 0;
    uint32_t v = 0;
    for (; i < avail && digits < ENTITY_DIGITS_MAX; i++, digits++) {
        int d = vf_hex_digit(t[i]);
        if (d < 0 || (!hex && d > 9))
            break;
        v = v * (hex ? 16 : 10) + (uint32_t)d;
    }
    if (digits == 0)
        return 0;
    *cp = v;
    return i < avail && t[i] == ';' ? i + 1 : i;
}

/* HTML5's named entities for printable ASCII (';' required). */
static const struct {
    const char *name;
    unsigned char ascii;
} named[] = {
    { "amp;", '&' },    { "lt;", '<' },     { "gt;", '>' },     { "quot;", '"' },   { "apos;", '\'' },
    { "sol;", '/' },    { "bsol;", '\\' },  { "colon;", ':' },  { "semi;", ';' },   { "period;", '.' },
    { "comma;", ',' },  { "lowbar;", '_' }, { "equals;", '=' }, { "plus;", '+' },   { "num;", '#' },
    { "percnt;", '%' }, { "excl;", '!' },   { "quest;", '?' },  { "commat;", '@' }, { "lpar;", '(' },
    { "rpar;", ')' },   { "ast;", '*' },    { "lsqb;", '[' },   { "rsqb;", ']' },   { "lcub;", '{' },
    { "rcub;", '}' },   { "dollar;", '$' }, { "Hat;", '^' },    { "grave;", '`' },  { "verbar;", '|' },
    { "Tab;", '\t' },   { "NewLine;", '\n' },
};
#define N_NAMED (sizeof named / sizeof named[0])

static size_t named_entity(const unsigned char *t, size_t avail, uint32_t *cp)
{
    if (avail < 2 || t[0] != '&')
        return 0;
    for (size_t i = 0; i < N_NAMED; i++) {
        size_t n = strlen(named[i].name);
        if (avail - 1 >= n && memcmp(t + 1, named[i].name, n) == 0) {
            *cp = named[i].ascii;
            return n + 1;
        }
    }
    return 0;
}

/* An escape that decodes to one character: its length, 0 when t holds none. */
static size_t escaped(const unsigned char *t, size_t avail, uint32_t *cp)
{
    if (t[0] == '%' || (t[0] == '\\' && avail >= 2 && t[1] == 'x')) {
        size_t at = t[0] == '%' ? 1 : 2;
        long v = hex_n(t + at, avail - at, 2);
        *cp = (uint32_t)v;
        return v < 0 ? 0 : at + 2;
    }
    if (t[0] == '\\')
        return json_escape(t, avail, cp);
    if (t[0] == '&') {
        size_t n = numeric_entity(t, avail, cp);
        return n ? n : named_entity(t, avail, cp);
    }
    return 0;
}

size_t vf_spelled_byte(const unsigned char *t, size_t avail, unsigned char b)
{
    if (avail == 0)
        return 0;
    uint32_t cp;
    size_t n = escaped(t, avail, &cp);
    if (n)
        return spells(cp, b) ? n : 0;
    if (t[0] == b || (t[0] == '+' && b == ' '))
        return 1;
    if (t[0] < 0x80)
        return 0;
    utf8proc_int32_t c;
    utf8proc_ssize_t used = utf8proc_iterate(t, (utf8proc_ssize_t)(avail < 4 ? avail : 4), &c);
    return used > 0 && spells((uint32_t)c, b) ? (size_t)used : 0;
}

/* ---- what may sit between two characters ---- */

static const unsigned char gap_pieces[][4] = {
    { 1, '\n' },
    { 1, '\r' },
    { 3, 0xE2, 0x80, 0x8B }, /* ZERO WIDTH SPACE */
    { 3, 0xE2, 0x80, 0x8C }, /* ZERO WIDTH NON-JOINER */
    { 3, 0xE2, 0x80, 0x8D }, /* ZERO WIDTH JOINER */
    { 3, 0xE2, 0x81, 0xA0 }, /* WORD JOINER */
    { 3, 0xEF, 0xBB, 0xBF }, /* ZERO WIDTH NO-BREAK SPACE (BOM) */
    { 3, 0xE1, 0xA0, 0x8E }, /* MONGOLIAN VOWEL SEPARATOR */
    { 2, 0xC2, 0xAD },       /* SOFT HYPHEN */
};
#define N_GAP (sizeof gap_pieces / sizeof gap_pieces[0])

size_t vf_spelling_gap(const unsigned char *t, size_t avail)
{
    size_t j = 0;
    for (unsigned pieces = 0; pieces < VF_SPELLING_GAP_MAX; pieces++) {
        size_t k = 0;
        for (; k < N_GAP; k++) {
            size_t n = gap_pieces[k][0];
            if (avail - j >= n && memcmp(t + j, gap_pieces[k] + 1, n) == 0) {
                j += n;
                break;
            }
        }
        if (k == N_GAP)
            break;
    }
    return j;
}

void vf_gap_pieces(void (*fn)(void *ctx, const unsigned char *s, size_t len), void *ctx)
{
    for (size_t k = 0; k < N_GAP; k++)
        fn(ctx, gap_pieces[k] + 1, gap_pieces[k][0]);
}

/* ---- prefixes, for the trigger set ---- */

void vf_spellings_of(unsigned char b, void (*fn)(void *ctx, const unsigned char *s, size_t len), void *ctx)
{
    static const char hex[] = "0123456789abcdefABCDEF";
    unsigned char s[4] = { b };
    fn(ctx, s, 1);
    if (b == ' ')
        fn(ctx, (const unsigned char *)"+", 1);
    for (int up_hi = 0; up_hi < 2; up_hi++)
        for (int up_lo = 0; up_lo < 2; up_lo++) {
            s[0] = '%', s[1] = (unsigned char)hex[(b >> 4) + (up_hi && (b >> 4) > 9 ? 6 : 0)];
            s[2] = (unsigned char)hex[(b & 15) + (up_lo && (b & 15) > 9 ? 6 : 0)];
            fn(ctx, s, 3);
        }
    for (size_t i = 0; hex[i]; i++) {
        /* \xX.., \uX..., &#D...: any digit, so escapes of compat characters count */
        s[0] = '\\', s[1] = 'x', s[2] = (unsigned char)hex[i];
        fn(ctx, s, 3);
        s[0] = '\\', s[1] = 'u', s[2] = (unsigned char)hex[i];
        fn(ctx, s, 3);
        if (i < 10) {
            s[0] = '&', s[1] = '#', s[2] = (unsigned char)hex[i];
            fn(ctx, s, 3);
        }
    }
    fn(ctx, (const unsigned char *)"&#x", 3);
    fn(ctx, (const unsigned char *)"&#X", 3);
    for (size_t i = 0; i < N_NAMED; i++)
        if (named[i].ascii == b) {
            s[0] = '&', memcpy(s + 1, named[i].name, 2);
            fn(ctx, s, 3);
        }
    pthread_once(&compat_once, compat_build);
    for (size_t i = 0; i < n_compat; i++)
        if (compat[i].ascii == b) {
            utf8proc_uint8_t enc[4];
            utf8proc_ssize_t n = utf8proc_encode_char((utf8proc_int32_t)compat[i].cp, enc);
            fn(ctx, enc, (size_t)n);
        }
}
