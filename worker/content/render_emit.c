#include "worker/content/render_emit.h"

#include <string.h>

/* windows-1252 for U+0080..U+009F, as HTML5 maps &#128;..&#159;. */
static const uint16_t c1_map[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
};

void em_put(emitter *e, const char *s, size_t n)
{
    if (n)
        vf_tbuf_append(&e->out, s, n);
}

void em_puts(emitter *e, const char *s)
{
    em_put(e, s, strlen(s));
}

size_t em_utf8_decode(const unsigned char *p, uint32_t *cp)
{
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    if ((p[0] & 0xE0) == 0xC0 && p[1]) {
        *cp = (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
        return 2;
    }
    if ((p[0] & 0xF0) == 0xE0 && p[1] && p[2]) {
        *cp = (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
        return 3;
    }
    if ((p[0] & 0xF8) == 0xF0 && p[1] && p[2] && p[3]) {
        *cp = (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
              (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
        return 4;
    }
    *cp = 0xFFFD;
    return 1;
}

size_t em_utf8_encode(uint32_t cp, char *u)
{
    if (cp < 0x80) {
        u[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Characters a reader never sees: soft hyphen, zero-width ones, word joiner,
 * BOM, bidi controls. */
bool em_invisible(uint32_t cp)
{
    return cp == 0xAD || (cp >= 0x200B && cp <= 0x200F) || cp == 0x2060 || cp == 0xFEFF ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x061C;
}

bool em_is_blank(uint32_t cp)
{
    return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == '\f' || cp == 0xA0;
}

static bool is_alnum_cp(uint32_t cp)
{
    return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
           (cp >= 0xC0 && cp < 0x2000);
}

/* Two inline boxes that a browser lays out apart (menu items, a figure next
 * to a heading) arrive with nothing between them: "HomeNews", "250,000The". */
static bool boxes_glue(uint32_t prev, uint32_t next)
{
    bool next_upper = (next >= 'A' && next <= 'Z') || (next >= 0xC0 && next <= 0xDE);
    bool prev_word = is_alnum_cp(prev) || prev == '.' || prev == '!' || prev == '?' ||
                     prev == ':' || prev == ';' || prev == ',' || prev == ')';
    bool prev_letter = (prev >= 'a' && prev <= 'z') || (prev >= 'A' && prev <= 'Z');
    bool next_digit = next >= '0' && next <= '9';
    return (prev_word && next_upper) || (prev_letter && next_digit && prev != 0);
}

void em_flush(emitter *e, uint32_t next_cp)
{
    if (e->out.len == 0) {
        e->pending = PEND_NONE;
        e->soft_sep = false;
        e->line_start = true;
    } else if (e->flat) {
        if ((e->pending != PEND_NONE && !e->line_start) ||
            (e->soft_sep && boxes_glue(e->last_cp, next_cp)))
            em_puts(e, " ");
    } else if (e->pending >= PEND_LINE) {
        em_puts(e, "\n");
        if (e->pending == PEND_BLANK) {
            /* The blank line carries the quote markers but no trailing blanks. */
            size_t k = e->prefix_len;
            while (k > 0 && e->prefix[k - 1] == ' ')
                k--;
            em_put(e, e->prefix, k);
            em_puts(e, "\n");
        }
        em_put(e, e->prefix, e->marker[0] ? e->marker_prefix : e->prefix_len);
        e->line_start = true;
    } else if (!e->line_start &&
               (e->pending == PEND_SPACE || (e->soft_sep && boxes_glue(e->last_cp, next_cp)))) {
        em_puts(e, " ");
    }
    if (e->marker[0] && !e->flat) {
        if (e->out.len > 0 && !e->line_start) {
            em_puts(e, "\n");
            em_put(e, e->prefix, e->marker_prefix);
        }
        em_puts(e, e->marker);
        e->marker[0] = '\0';
    }
    e->pending = PEND_NONE;
    e->soft_sep = false;
    e->line_start = false;
}

void em_want(emitter *e, int level)
{
    /* A line holding only its prefix needs no further separation. */
    if (e->out.len > 0 && !e->line_start && level > e->pending)
        e->pending = level;
}

bool em_md_special(uint32_t cp)
{
    return cp == '*' || cp == '`' || cp == '[' || cp == ']' || cp == '\\' || cp == '<' ||
           cp == '_';
}

/* Printable ASCII that em_text writes as it is once nothing is pending:
 * no blank, no control; bit 1 also says Markdown need not escape it. */
enum { PLAIN_TEXT = 1, PLAIN_MD = 2 };
static const uint8_t plain_byte[256] = {
    ['!' ... ')'] = 3, ['*'] = PLAIN_TEXT, ['+' ... ';'] = 3, ['<'] = PLAIN_TEXT, ['=' ... 'Z'] = 3,
    ['['] = PLAIN_TEXT, ['\\'] = PLAIN_TEXT, [']'] = PLAIN_TEXT, ['^'] = 3, ['_'] = PLAIN_TEXT,
    ['`'] = PLAIN_TEXT, ['a' ... '~'] = 3,
};

static bool ascii_blank(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f';
}

/* The common case of em_text in bulk: with nothing pending (no separator,
 * marker, box edge, not at a line start), words of plain ASCII and single
 * spaces for the blank runs between them go out as they are, which is what
 * the character loop would write. Stretches of the input where words are
 * already joined by one plain space are copied whole. Returns where that
 * loop must go on. */
static const unsigned char *plain_run(emitter *e, const unsigned char *s)
{
    if (e->out.len == 0 || e->pending != PEND_NONE || e->soft_sep || e->line_start || e->marker[0])
        return s;
    const uint8_t want = e->o->markdown ? PLAIN_MD : PLAIN_TEXT;
    const unsigned char *copy_from = s; /* input not yet written, as it is */
    for (;;) {
        const unsigned char *w = s;
        while (ascii_blank(*w))
            w++;
        if (!(plain_byte[*w] & want))
            break;
        if (w > s && !(w == s + 1 && *s == ' ')) {
            /* Another gap than one space: what came before as it is, then one space. */
            em_put(e, (const char *)copy_from, (size_t)(s - copy_from));
            em_put(e, " ", 1);
            copy_from = w;
        }
        while (plain_byte[*w] & want)
            w++;
        e->last_cp = w[-1];
        s = w;
    }
    em_put(e, (const char *)copy_from, (size_t)(s - copy_from));
    return s;
}

/* Collapsed inline text. */
void em_text(emitter *e, const unsigned char *s)
{
    while (*s) {
        s = plain_run(e, s);
        if (!*s)
            break;
        uint32_t cp;
        size_t k = em_utf8_decode(s, &cp);
        s += k;
        if (cp >= 0x80 && cp <= 0x9F)
            cp = c1_map[cp - 0x80];
        if (em_invisible(cp) || cp == 0)
            continue;
        if (em_is_blank(cp)) {
            if (e->out.len > 0 && !e->line_start && e->pending < PEND_SPACE)
                e->pending = PEND_SPACE;
            continue;
        }
        em_flush(e, cp);
        if (e->o->markdown && em_md_special(cp)) {
            /* Underscores inside words are never emphasis. */
            if (!(cp == '_' && is_alnum_cp(e->last_cp)))
                em_puts(e, "\\");
        } else if (e->o->markdown && (cp == '#' || cp == '>') && e->line_start) {
            em_puts(e, "\\");
        }
        char u[4];
        em_put(e, u, em_utf8_encode(cp, u));
        e->last_cp = cp;
    }
}

/* Raw text (pre): every character kept, lines prefixed. */
void em_raw_text(emitter *e, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = em_utf8_decode(s + i, &cp);
        i += k;
        if (cp >= 0x80 && cp <= 0x9F)
            cp = c1_map[cp - 0x80];
        if (em_invisible(cp) || cp == 0 || cp == '\r')
            continue;
        char u[4];
        em_put(e, u, em_utf8_encode(cp, u));
        if (cp == '\n')
            em_put(e, e->prefix, e->prefix_len);
    }
}

