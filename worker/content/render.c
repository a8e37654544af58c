#include "worker/content/render.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/uri.h>

#include "worker/content/dom_util.h"
#include "worker/content/main_content.h"
#include "worker/content/tag_class.h"
#include "worker/content/text_buf.h"

#define PREFIX_MAX 128
#define MAX_LINKS 1000
#define MAX_TABLE_CELLS 4096

enum { PEND_NONE = 0, PEND_SPACE, PEND_LINE, PEND_BLANK };

typedef struct {
    vf_tbuf out;
    const vf_render_opts *o;
    int pending;
    bool soft_sep;          /* an inline box edge was crossed since the last text */
    bool flat;              /* a table cell: every break is a space */
    char prefix[PREFIX_MAX];
    size_t prefix_len;
    char marker[24];        /* list marker or heading hashes, written before the next text */
    size_t marker_prefix;   /* how much of prefix the marker's own line takes */
    uint32_t last_cp;
    bool line_start;
    unsigned in_link;
    unsigned in_heading;
    char **links;
    size_t n_links;
    const char *base;
} emitter;

/* windows-1252 for U+0080..U+009F, as HTML5 maps &#128;..&#159;. */
static const uint16_t c1_map[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
};

static void put(emitter *e, const char *s, size_t n)
{
    if (n)
        vf_tbuf_append(&e->out, s, n);
}

static void puts_(emitter *e, const char *s)
{
    put(e, s, strlen(s));
}

static size_t utf8_decode(const unsigned char *p, uint32_t *cp)
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

static size_t utf8_encode(uint32_t cp, char *u)
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
static bool invisible(uint32_t cp)
{
    return cp == 0xAD || (cp >= 0x200B && cp <= 0x200F) || cp == 0x2060 || cp == 0xFEFF ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x061C;
}

static bool is_blank_cp(uint32_t cp)
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

static void flush(emitter *e, uint32_t next_cp)
{
    if (e->out.len == 0) {
        e->pending = PEND_NONE;
        e->soft_sep = false;
        e->line_start = true;
    } else if (e->flat) {
        if ((e->pending != PEND_NONE && !e->line_start) ||
            (e->soft_sep && boxes_glue(e->last_cp, next_cp)))
            puts_(e, " ");
    } else if (e->pending >= PEND_LINE) {
        puts_(e, "\n");
        if (e->pending == PEND_BLANK) {
            /* The blank line carries the quote markers but no trailing blanks. */
            size_t k = e->prefix_len;
            while (k > 0 && e->prefix[k - 1] == ' ')
                k--;
            put(e, e->prefix, k);
            puts_(e, "\n");
        }
        put(e, e->prefix, e->marker[0] ? e->marker_prefix : e->prefix_len);
        e->line_start = true;
    } else if (!e->line_start &&
               (e->pending == PEND_SPACE || (e->soft_sep && boxes_glue(e->last_cp, next_cp)))) {
        puts_(e, " ");
    }
    if (e->marker[0] && !e->flat) {
        if (e->out.len > 0 && !e->line_start) {
            puts_(e, "\n");
            put(e, e->prefix, e->marker_prefix);
        }
        puts_(e, e->marker);
        e->marker[0] = '\0';
    }
    e->pending = PEND_NONE;
    e->soft_sep = false;
    e->line_start = false;
}

static void want(emitter *e, int level)
{
    /* A line holding only its prefix needs no further separation. */
    if (e->out.len > 0 && !e->line_start && level > e->pending)
        e->pending = level;
}

static bool md_special(uint32_t cp)
{
    return cp == '*' || cp == '`' || cp == '[' || cp == ']' || cp == '\\' || cp == '<' ||
           cp == '_';
}

/* Collapsed inline text. */
static void text(emitter *e, const unsigned char *s)
{
    while (*s) {
        uint32_t cp;
        size_t k = utf8_decode(s, &cp);
        s += k;
        if (cp >= 0x80 && cp <= 0x9F)
            cp = c1_map[cp - 0x80];
        if (invisible(cp) || cp == 0)
            continue;
        if (is_blank_cp(cp)) {
            if (e->out.len > 0 && !e->line_start && e->pending < PEND_SPACE)
                e->pending = PEND_SPACE;
            continue;
        }
        flush(e, cp);
        if (e->o->markdown && md_special(cp)) {
            /* Underscores inside words are never emphasis. */
            if (!(cp == '_' && is_alnum_cp(e->last_cp)))
                puts_(e, "\\");
        } else if (e->o->markdown && (cp == '#' || cp == '>') && e->line_start) {
            puts_(e, "\\");
        }
        char u[4];
        put(e, u, utf8_encode(cp, u));
        e->last_cp = cp;
    }
}

/* Raw text (pre): every character kept, lines prefixed. */
static void raw_text(emitter *e, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, &cp);
        i += k;
        if (cp >= 0x80 && cp <= 0x9F)
            cp = c1_map[cp - 0x80];
        if (invisible(cp) || cp == 0 || cp == '\r')
            continue;
        char u[4];
        put(e, u, utf8_encode(cp, u));
        if (cp == '\n')
            put(e, e->prefix, e->prefix_len);
    }
}

static void render_children(emitter *e, xmlNode *el);
static void render_node(emitter *e, xmlNode *n);

/* ---------------------------------------------------------------- links */

static char *resolve(emitter *e, const char *href)
{
    if (!href)
        return NULL;
    while (*href == ' ' || *href == '\t' || *href == '\n' || *href == '\r')
        href++;
    if (!href[0] || href[0] == '#')
        return NULL;
    if (strncasecmp(href, "javascript:", 11) == 0 || strncasecmp(href, "data:", 5) == 0 ||
        strncasecmp(href, "vbscript:", 9) == 0)
        return NULL;
    xmlChar *abs = e->base ? xmlBuildURI((const xmlChar *)href, (const xmlChar *)e->base)
                           : xmlStrdup((const xmlChar *)href);
    if (!abs)
        return NULL;
    /* Markdown link destinations end at a blank or an unbalanced parenthesis. */
    size_t n = strlen((char *)abs), o = 0;
    char *u = malloc(n * 3 + 1);
    if (u) {
        for (size_t i = 0; i < n; i++) {
            unsigned char c = abs[i];
            if (c == ' ' || c == '(' || c == ')' || c == '<' || c == '>' || c < 0x20) {
                if (c == '\n' || c == '\r' || c == '\t')
                    continue;
                o += (size_t)snprintf(u + o, 4, "%%%02X", c);
            } else {
                u[o++] = (char)c;
            }
        }
        u[o] = '\0';
    }
    xmlFree(abs);
    return u;
}

static size_t remember_link(emitter *e, char *url)
{
    for (size_t i = 0; i < e->n_links; i++)
        if (strcmp(e->links[i], url) == 0) {
            free(url);
            return i + 1;
        }
    if (e->n_links >= MAX_LINKS) {
        free(url);
        return 0;
    }
    char **grown = realloc(e->links, (e->n_links + 1) * sizeof *grown);
    if (!grown) {
        free(url);
        return 0;
    }
    e->links = grown;
    e->links[e->n_links++] = url;
    return e->n_links;
}

/* Where the text of a link begins in the output: after the separator, line
 * prefix and list marker that flush wrote in front of it. */
static size_t link_text_start(emitter *e, size_t from)
{
    size_t mark = from;
    size_t nl = from;
    while (nl < e->out.len && (e->out.data[nl] == ' ' || e->out.data[nl] == '\n')) {
        if (e->out.data[nl] == '\n')
            mark = nl + 1 + e->prefix_len; /* after the newline and the prefix */
        nl++;
    }
    if (mark < nl)
        mark = nl;
    /* A list marker or heading hashes written just before the text. */
    if (mark < e->out.len && e->out.data[mark] == '#') {
        while (mark < e->out.len && e->out.data[mark] == '#')
            mark++;
        if (mark < e->out.len && e->out.data[mark] == ' ')
            mark++;
    } else if (mark + 1 < e->out.len && (e->out.data[mark] == '-' && e->out.data[mark + 1] == ' ')) {
        mark += 2;
    } else {
        size_t d = mark;
        while (d < e->out.len && e->out.data[d] >= '0' && e->out.data[d] <= '9')
            d++;
        if (d > mark && d + 1 < e->out.len && e->out.data[d] == '.' && e->out.data[d + 1] == ' ')
            mark = d + 2;
    }
    return mark > e->out.len ? e->out.len : mark;
}

static void render_link(emitter *e, xmlNode *a)
{
    char *url = (e->in_link || e->o->links == VF_LINKS_NONE) ? NULL
                                                              : resolve(e, vf_dom_attr(a, "href"));
    if (!url || (!e->o->markdown && e->o->links == VF_LINKS_INLINE)) {
        free(url);
        e->soft_sep = true;
        render_children(e, a);
        e->soft_sep = true;
        return;
    }
    e->soft_sep = true;
    bool md = e->o->markdown;
    /* The children are rendered first; "[" is then inserted where their
     * first character landed, after whatever separator flush wrote. */
    e->in_link++;
    size_t start_len = e->out.len;
    render_children(e, a);
    e->in_link--;
    if (e->out.len == start_len) {
        free(url);
        return;
    }
    size_t mark = link_text_start(e, start_len);
    if (md) {
        /* Insert "[" at mark. */
        if (vf_tbuf_append(&e->out, " ", 1)) {
            memmove(e->out.data + mark + 1, e->out.data + mark, e->out.len - 1 - mark);
            e->out.data[mark] = '[';
        }
    }
    if (e->o->links == VF_LINKS_INLINE) {
        puts_(e, "](");
        puts_(e, url);
        puts_(e, ")");
        free(url);
    } else {
        size_t k = remember_link(e, url);
        char ref[24];
        if (k)
            snprintf(ref, sizeof ref, md ? "][%zu]" : " [%zu]", k);
        else
            snprintf(ref, sizeof ref, md ? "]" : "");
        puts_(e, ref);
    }
    e->last_cp = ')';
    e->soft_sep = true;
}

static void render_img(emitter *e, xmlNode *img)
{
    if (!e->o->markdown)
        return;
    const char *alt = vf_dom_attr(img, "alt");
    if (!alt || !alt[0])
        return;
    char *url = e->o->links == VF_LINKS_NONE ? NULL : resolve(e, vf_dom_attr(img, "src"));
    e->soft_sep = true;
    flush(e, '!');
    puts_(e, "![");
    e->in_link++;
    text(e, (const unsigned char *)alt);
    e->in_link--;
    if (url && e->o->links == VF_LINKS_INLINE) {
        puts_(e, "](");
        puts_(e, url);
        puts_(e, ")");
        free(url);
    } else if (url) {
        size_t k = remember_link(e, url);
        char ref[24];
        snprintf(ref, sizeof ref, k ? "][%zu]" : "]", k);
        puts_(e, ref);
    } else {
        puts_(e, "]");
    }
    e->last_cp = ']';
    e->soft_sep = true;
}

/* ---------------------------------------------------------------- blocks */

static void push_prefix(emitter *e, const char *add, size_t *saved)
{
    *saved = e->prefix_len;
    size_t n = strlen(add);
    if (e->prefix_len + n < PREFIX_MAX) {
        memcpy(e->prefix + e->prefix_len, add, n);
        e->prefix_len += n;
    }
}

static void pop_prefix(emitter *e, size_t saved)
{
    e->prefix_len = saved;
}

static void gather_raw(xmlNode *el, vf_tbuf *b)
{
    for (xmlNode *n = el->children; n; n = n->next) {
        if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
            if (n->content)
                vf_tbuf_append(b, (const char *)n->content, strlen((const char *)n->content));
        } else if (n->type == XML_ELEMENT_NODE && !vf_main_skips(n)) {
            vf_tag_info t = vf_dom_tag(n);
            if (t.id == VF_T_BR)
                vf_tbuf_append(b, "\n", 1);
            else if (!(t.flags & VF_TAG_DROP))
                gather_raw(n, b);
        }
    }
}

static const char *code_language(xmlNode *pre)
{
    static char lang[32];
    xmlNode *code = NULL;
    for (xmlNode *c = pre->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && vf_dom_tag(c).id == VF_T_CODE)
            code = c;
    const char *cls[2] = { vf_dom_attr(pre, "class"), code ? vf_dom_attr(code, "class") : NULL };
    for (int i = 0; i < 2; i++) {
        const char *p = cls[i] ? strstr(cls[i], "language-") : NULL;
        size_t skip = 9;
        if (!p && cls[i]) {
            p = strstr(cls[i], "lang-");
            skip = 5;
        }
        if (!p)
            continue;
        p += skip;
        size_t n = 0;
        while (p[n] && n + 1 < sizeof lang &&
               ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
                (p[n] >= '0' && p[n] <= '9') || p[n] == '+' || p[n] == '-' || p[n] == '#'))
            n++;
        memcpy(lang, p, n);
        lang[n] = '\0';
        return lang;
    }
    return "";
}

static void render_pre(emitter *e, xmlNode *pre)
{
    vf_tbuf raw;
    vf_tbuf_init(&raw, e->o->max_out);
    gather_raw(pre, &raw);
    size_t len = 0;
    char *s = vf_tbuf_take(&raw, &len);
    if (!s)
        return;
    size_t start = 0;
    /* HTML drops one newline right after <pre>; the parser may not have. */
    if (len > 0 && s[0] == '\n')
        start = 1;
    while (len > start && (s[len - 1] == '\n' || s[len - 1] == ' ' || s[len - 1] == '\t' ||
                           s[len - 1] == '\r'))
        len--;
    if (len <= start) {
        free(s);
        return;
    }
    if (e->flat) {
        s[len] = '\0';
        text(e, (const unsigned char *)s + start);
        free(s);
        return;
    }
    want(e, PEND_BLANK);
    flush(e, 'x');
    if (e->o->markdown) {
        size_t run = 0, longest = 0;
        for (size_t i = start; i < len; i++) {
            run = s[i] == '`' ? run + 1 : 0;
            if (run > longest)
                longest = run;
        }
        char fence[16];
        size_t f = longest >= 3 ? (longest + 1 < sizeof fence ? longest + 1 : sizeof fence - 1) : 3;
        memset(fence, '`', f);
        fence[f] = '\0';
        puts_(e, fence);
        puts_(e, code_language(pre));
        puts_(e, "\n");
        put(e, e->prefix, e->prefix_len);
        raw_text(e, (const unsigned char *)s + start, len - start);
        puts_(e, "\n");
        put(e, e->prefix, e->prefix_len);
        puts_(e, fence);
    } else {
        raw_text(e, (const unsigned char *)s + start, len - start);
    }
    free(s);
    e->last_cp = '\n';
    e->pending = PEND_BLANK;
}

static void render_list(emitter *e, xmlNode *list, bool ordered, unsigned depth)
{
    want(e, depth > 0 ? PEND_LINE : PEND_BLANK);
    long number = 1;
    const char *start = ordered ? vf_dom_attr(list, "start") : NULL;
    if (start) {
        long v = strtol(start, NULL, 10);
        if (v >= 0 && v < 1000000000)
            number = v;
    }
    for (xmlNode *li = list->children; li; li = li->next) {
        if (li->type == XML_TEXT_NODE) {
            render_node(e, li);
            continue;
        }
        if (li->type != XML_ELEMENT_NODE || vf_main_skips(li))
            continue;
        if (vf_dom_tag(li).id != VF_T_LI) {
            render_node(e, li);
            continue;
        }
        want(e, PEND_LINE);
        if (e->flat) {
            render_children(e, li);
            e->pending = e->pending < PEND_SPACE ? PEND_SPACE : e->pending;
            continue;
        }
        char marker[24];
        if (ordered)
            snprintf(marker, sizeof marker, "%ld. ", number++);
        else
            snprintf(marker, sizeof marker, "%s", e->o->markdown ? "- " : "\xe2\x80\xa2 ");
        snprintf(e->marker, sizeof e->marker, "%s", marker);
        e->marker_prefix = e->prefix_len;
        size_t saved;
        size_t width = ordered ? strlen(marker) : 2;
        char indent[16];
        memset(indent, ' ', width);
        indent[width < sizeof indent ? width : sizeof indent - 1] = '\0';
        push_prefix(e, indent, &saved);
        render_children(e, li);
        pop_prefix(e, saved);
        e->marker[0] = '\0'; /* an empty item leaves no marker behind */
        want(e, PEND_LINE);
    }
    want(e, depth > 0 ? PEND_LINE : PEND_BLANK);
}

static unsigned list_depth(const xmlNode *n)
{
    unsigned d = 0;
    for (const xmlNode *p = n->parent; p && p->type == XML_ELEMENT_NODE; p = p->parent)
        d += vf_dom_tag(p).id == VF_T_LI;
    return d;
}

/* ---------------------------------------------------------------- tables */

typedef struct {
    xmlNode *cells[MAX_TABLE_CELLS];
    size_t n_cells;
    size_t row_start[MAX_TABLE_CELLS];
    size_t n_rows;
    size_t cols;
} table_shape;

static bool table_rows(xmlNode *el, table_shape *t, bool *layout)
{
    for (xmlNode *n = el->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE || vf_main_skips(n))
            continue;
        vf_tag_info ti = vf_dom_tag(n);
        if (ti.id == VF_T_THEAD || ti.id == VF_T_TBODY || ti.id == VF_T_TFOOT) {
            if (!table_rows(n, t, layout))
                return false;
        } else if (ti.id == VF_T_TR) {
            if (t->n_rows >= MAX_TABLE_CELLS)
                return false;
            t->row_start[t->n_rows++] = t->n_cells;
            size_t cols = 0;
            for (xmlNode *c = n->children; c; c = c->next) {
                if (c->type != XML_ELEMENT_NODE || vf_main_skips(c))
                    continue;
                vf_tag_info ci = vf_dom_tag(c);
                if (ci.id != VF_T_TD && ci.id != VF_T_TH)
                    continue;
                if (t->n_cells >= MAX_TABLE_CELLS)
                    return false;
                t->cells[t->n_cells++] = c;
                cols++;
                /* Blocks inside a cell make it page layout, not data. */
                for (xmlNode *d = c->children; d; d = vf_dom_next(d, c, false)) {
                    if (d->type != XML_ELEMENT_NODE)
                        continue;
                    vf_tag_info di = vf_dom_tag(d);
                    if (di.id == VF_T_TABLE || di.id == VF_T_P || (di.flags & VF_TAG_LIST) ||
                        (di.flags & VF_TAG_HEADING) || di.id == VF_T_PRE || di.id == VF_T_DIV)
                        *layout = true;
                }
            }
            if (cols > t->cols)
                t->cols = cols;
        } else if (ti.id != VF_T_CAPTION) {
            *layout = true;
        }
    }
    return true;
}

static char *cell_text(emitter *e, xmlNode *cell)
{
    emitter sub = { .o = e->o, .flat = true, .base = e->base, .line_start = true };
    vf_tbuf_init(&sub.out, e->o->max_out);
    render_children(&sub, cell);
    size_t n;
    char *s = vf_tbuf_take(&sub.out, &n);
    for (size_t i = 0; i < sub.n_links; i++)
        free(sub.links[i]);
    free(sub.links);
    return s;
}

static void put_cell(emitter *e, const char *s)
{
    for (; *s; s++) {
        if (*s == '|' && e->o->markdown)
            puts_(e, "\\|");
        else if (*s == '\n')
            puts_(e, " ");
        else
            put(e, s, 1);
    }
}

/* A table used for page layout: every cell is a block of its own. */
static void render_layout(emitter *e, xmlNode *el)
{
    for (xmlNode *n = el->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) {
            render_node(e, n);
            continue;
        }
        if (vf_main_skips(n))
            continue;
        vf_tag_info ti = vf_dom_tag(n);
        if (ti.id == VF_T_TR || ti.id == VF_T_TBODY || ti.id == VF_T_THEAD || ti.id == VF_T_TFOOT) {
            render_layout(e, n);
        } else if (ti.id == VF_T_TD || ti.id == VF_T_TH || ti.id == VF_T_CAPTION) {
            want(e, PEND_LINE);
            render_children(e, n);
            want(e, PEND_LINE);
        } else {
            render_node(e, n);
        }
    }
}

static void render_table(emitter *e, xmlNode *table)
{
    table_shape *t = calloc(1, sizeof *t);
    bool layout = false;
    if (!t)
        return;
    if (!table_rows(table, t, &layout) || t->cols < 2 || t->n_rows < 1 || e->flat)
        layout = true;
    if (layout) {
        free(t);
        want(e, PEND_LINE);
        render_layout(e, table);
        want(e, PEND_LINE);
        return;
    }
    want(e, PEND_BLANK);
    for (xmlNode *c = table->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && vf_dom_tag(c).id == VF_T_CAPTION) {
            render_children(e, c);
            want(e, PEND_BLANK);
        }
    bool md = e->o->markdown;
    for (size_t r = 0; r < t->n_rows; r++) {
        size_t from = t->row_start[r];
        size_t to = r + 1 < t->n_rows ? t->row_start[r + 1] : t->n_cells;
        if (to == from)
            continue;
        want(e, PEND_LINE);
        flush(e, 'x');
        if (md)
            puts_(e, "|");
        for (size_t c = 0; c < t->cols; c++) {
            char *s = from + c < to ? cell_text(e, t->cells[from + c]) : NULL;
            if (md)
                puts_(e, " ");
            else if (c > 0)
                puts_(e, "\t");
            if (s)
                put_cell(e, s);
            free(s);
            if (md)
                puts_(e, " |");
        }
        if (md && r == 0) {
            puts_(e, "\n");
            put(e, e->prefix, e->prefix_len);
            puts_(e, "|");
            for (size_t c = 0; c < t->cols; c++)
                puts_(e, " --- |");
        }
        e->last_cp = '|';
    }
    free(t);
    want(e, PEND_BLANK);
}

/* ---------------------------------------------------------------- walk */

static void render_heading(emitter *e, xmlNode *h, unsigned level)
{
    if (e->flat) {
        render_children(e, h);
        return;
    }
    want(e, PEND_BLANK);
    if (e->o->markdown) {
        memset(e->marker, '#', level);
        e->marker[level] = ' ';
        e->marker[level + 1] = '\0';
        e->marker_prefix = e->prefix_len;
    }
    e->in_heading++;
    render_children(e, h);
    e->in_heading--;
    e->marker[0] = '\0';
    want(e, PEND_BLANK);
}

static void render_quote(emitter *e, xmlNode *q)
{
    if (e->flat || !e->o->markdown) {
        want(e, PEND_BLANK);
        render_children(e, q);
        want(e, PEND_BLANK);
        return;
    }
    want(e, PEND_BLANK);
    /* The separator before the quote belongs to the outer level. */
    if (e->out.len > 0 && e->pending >= PEND_LINE) {
        puts_(e, "\n");
        size_t k = e->prefix_len;
        while (k > 0 && e->prefix[k - 1] == ' ')
            k--;
        put(e, e->prefix, k);
        e->pending = PEND_LINE;
    }
    size_t saved;
    push_prefix(e, "> ", &saved);
    if (e->out.len == 0 || e->pending == PEND_LINE) {
        if (e->out.len > 0)
            puts_(e, "\n");
        put(e, e->prefix, e->prefix_len);
        e->pending = PEND_NONE;
        e->line_start = true;
    }
    render_children(e, q);
    pop_prefix(e, saved);
    want(e, PEND_BLANK);
}

static void render_element(emitter *e, xmlNode *el)
{
    if (vf_main_skips(el))
        return;
    vf_tag_info t = vf_dom_tag(el);
    if (t.flags & VF_TAG_DROP)
        return;
    switch (t.id) {
    case VF_T_BR:
        if (e->in_heading || e->flat) {
            want(e, PEND_SPACE);
        } else if (!e->line_start && e->out.len > 0) {
            if (e->o->markdown)
                puts_(e, "\\");
            want(e, PEND_LINE);
        }
        return;
    case VF_T_HR:
        if (e->flat)
            return;
        want(e, PEND_BLANK);
        if (e->o->markdown) {
            flush(e, '-');
            puts_(e, "---");
            e->last_cp = '-';
        }
        want(e, PEND_BLANK);
        return;
    case VF_T_IMG:
        render_img(e, el);
        return;
    case VF_T_A:
        render_link(e, el);
        return;
    case VF_T_PRE:
        render_pre(e, el);
        return;
    case VF_T_UL:
    case VF_T_OL:
        render_list(e, el, t.id == VF_T_OL, list_depth(el));
        return;
    case VF_T_TABLE:
        render_table(e, el);
        return;
    case VF_T_BLOCKQUOTE:
        render_quote(e, el);
        return;
    case VF_T_CODE:
        if (e->o->markdown && !e->flat) {
            e->soft_sep = true;
            flush(e, '`');
            puts_(e, "`");
            size_t start = e->out.len;
            vf_render_opts plain = *e->o;
            plain.markdown = false;
            const vf_render_opts *keep = e->o;
            e->o = &plain;
            render_children(e, el);
            e->o = keep;
            if (e->out.len == start) {
                e->out.len = start - 1; /* nothing inside: no empty `` */
                e->out.data[e->out.len] = '\0';
            } else {
                puts_(e, "`");
                e->last_cp = '`';
            }
            return;
        }
        break;
    default:
        break;
    }
    if (t.flags & VF_TAG_HEADING) {
        render_heading(e, el, t.level);
        return;
    }
    if (t.id == VF_T_LI) { /* stray <li> outside a list */
        want(e, PEND_LINE);
        render_children(e, el);
        want(e, PEND_LINE);
        return;
    }
    if (t.flags & VF_TAG_BLOCK) {
        bool para = t.id == VF_T_P || t.id == VF_T_FIGURE || t.id == VF_T_DL ||
                    t.id == VF_T_ADDRESS || t.id == VF_T_DETAILS;
        want(e, para ? PEND_BLANK : PEND_LINE);
        render_children(e, el);
        want(e, para ? PEND_BLANK : PEND_LINE);
        return;
    }
    if (t.id == VF_T_TD || t.id == VF_T_TH) {
        want(e, PEND_SPACE);
        render_children(e, el);
        want(e, PEND_SPACE);
        return;
    }
    /* Inline. Formatting never separates words; other boxes may. */
    bool box = !(t.flags & VF_TAG_FORMAT);
    if (box)
        e->soft_sep = true;
    render_children(e, el);
    if (box)
        e->soft_sep = true;
}

static void render_node(emitter *e, xmlNode *n)
{
    if (e->out.truncated || e->out.oom)
        return;
    if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
        if (n->content)
            text(e, n->content);
    } else if (n->type == XML_ELEMENT_NODE) {
        render_element(e, n);
    }
}

static void render_children(emitter *e, xmlNode *el)
{
    for (xmlNode *c = el->children; c; c = c->next)
        render_node(e, c);
}

static void append_link_list(emitter *e)
{
    if (e->n_links == 0)
        return;
    puts_(e, e->out.len ? "\n\n" : "");
    for (size_t i = 0; i < e->n_links; i++) {
        char num[24];
        snprintf(num, sizeof num, e->o->markdown ? "[%zu]: " : "[%zu] ", i + 1);
        puts_(e, num);
        puts_(e, e->links[i]);
        if (i + 1 < e->n_links)
            puts_(e, "\n");
    }
}

char *vf_render(xmlNode *const *roots, size_t n_roots, const vf_render_opts *o, size_t *out_len)
{
    emitter e = { .o = o, .line_start = true, .base = o->base_url };
    vf_tbuf_init(&e.out, o->max_out);
    for (size_t i = 0; i < n_roots; i++) {
        xmlNode *r = roots[i];
        if (r->type == XML_ELEMENT_NODE && vf_dom_tag(r).id == VF_T_BODY)
            render_children(&e, r);
        else
            render_node(&e, r);
        want(&e, PEND_BLANK);
    }
    if (o->links == VF_LINKS_LIST)
        append_link_list(&e);
    for (size_t i = 0; i < e.n_links; i++)
        free(e.links[i]);
    free(e.links);
    /* Cut on a character boundary if the cap fell mid-sequence. */
    if (e.out.truncated && e.out.len > 0) {
        size_t i = e.out.len;
        size_t back = 0;
        while (i > 0 && back < 4 && ((unsigned char)e.out.data[i - 1] & 0xC0) == 0x80)
            i--, back++;
        if (i > 0) {
            unsigned char lead = (unsigned char)e.out.data[i - 1];
            size_t need = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
            if (lead >= 0x80 && back + 1 < need)
                e.out.len = i - 1;
        }
        e.out.data[e.out.len] = '\0';
    }
    return vf_tbuf_take(&e.out, out_len);
}
