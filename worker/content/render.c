#include "worker/content/render.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/uri.h>

#include "worker/content/dom_util.h"
#include "worker/content/main_content.h"
#include "worker/content/page_map.h"
#include "worker/content/tag_class.h"
#include "worker/content/text_buf.h"

#include "worker/content/render_emit.h"


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

static void render_link(emitter *e, vf_node *a)
{
    char *url = (e->in_link || e->o->links == VF_LINKS_NONE) ? NULL
                                                              : resolve(e, vf_dom_attr(a, "href"));
    if (!url || (!e->o->markdown && e->o->links == VF_LINKS_INLINE)) {
        free(url);
        e->soft_sep = true;
        vf_render_children(e, a);
        e->soft_sep = true;
        return;
    }
    e->soft_sep = true;
    bool md = e->o->markdown;
    /* The children are rendered first; "[" is then inserted where their
     * first character landed, after whatever separator flush wrote. */
    e->in_link++;
    size_t start_len = e->out.len;
    vf_render_children(e, a);
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
        em_puts(e, "](");
        em_puts(e, url);
        em_puts(e, ")");
        free(url);
    } else {
        size_t k = remember_link(e, url);
        char ref[24];
        if (k)
            snprintf(ref, sizeof ref, md ? "][%zu]" : " [%zu]", k);
        else
            snprintf(ref, sizeof ref, md ? "]" : "");
        em_puts(e, ref);
    }
    e->last_cp = ')';
    e->soft_sep = true;
}

static void render_img(emitter *e, vf_node *img)
{
    if (!e->o->markdown)
        return;
    const char *alt = vf_dom_attr(img, "alt");
    if (!alt || !alt[0])
        return;
    char *url = e->o->links == VF_LINKS_NONE ? NULL : resolve(e, vf_dom_attr(img, "src"));
    e->soft_sep = true;
    em_flush(e, '!');
    em_puts(e, "![");
    e->in_link++;
    em_text(e, (const unsigned char *)alt);
    e->in_link--;
    if (url && e->o->links == VF_LINKS_INLINE) {
        em_puts(e, "](");
        em_puts(e, url);
        em_puts(e, ")");
        free(url);
    } else if (url) {
        size_t k = remember_link(e, url);
        char ref[24];
        snprintf(ref, sizeof ref, k ? "][%zu]" : "]", k);
        em_puts(e, ref);
    } else {
        em_puts(e, "]");
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

static void gather_raw(vf_node *el, vf_tbuf *b)
{
    for (vf_node *n = vf_node_first(el); n; n = n->next) {
        if (n->type == VF_NODE_TEXT || n->type == VF_NODE_CDATA) {
            vf_tbuf_append(b, vf_node_text(n), n->aux);
        } else if (n->type == VF_NODE_ELEMENT && !vf_main_skips(n)) {
            vf_tag_info t = vf_dom_tag(n);
            if (t.id == VF_T_BR)
                vf_tbuf_append(b, "\n", 1);
            else if (!(t.flags & VF_TAG_DROP))
                gather_raw(n, b);
        }
    }
}

static const char *code_language(vf_node *pre)
{
    static char lang[32];
    vf_node *code = NULL;
    for (vf_node *c = vf_node_first(pre); c; c = c->next)
        if (c->type == VF_NODE_ELEMENT && vf_dom_tag(c).id == VF_T_CODE)
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

static void render_pre(emitter *e, vf_node *pre)
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
        em_text(e, (const unsigned char *)s + start);
        free(s);
        return;
    }
    em_want(e, PEND_BLANK);
    em_flush(e, 'x');
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
        em_puts(e, fence);
        em_puts(e, code_language(pre));
        em_puts(e, "\n");
        em_put(e, e->prefix, e->prefix_len);
        em_raw_text(e, (const unsigned char *)s + start, len - start);
        em_puts(e, "\n");
        em_put(e, e->prefix, e->prefix_len);
        em_puts(e, fence);
    } else {
        em_raw_text(e, (const unsigned char *)s + start, len - start);
    }
    free(s);
    e->last_cp = '\n';
    e->pending = PEND_BLANK;
}

static void render_list(emitter *e, vf_node *list, bool ordered, unsigned depth)
{
    em_want(e, depth > 0 ? PEND_LINE : PEND_BLANK);
    long number = 1;
    const char *start = ordered ? vf_dom_attr(list, "start") : NULL;
    if (start) {
        long v = strtol(start, NULL, 10);
        if (v >= 0 && v < 1000000000)
            number = v;
    }
    for (vf_node *li = vf_node_first(list); li; li = li->next) {
        if (li->type == VF_NODE_TEXT) {
            vf_render_node(e, li);
            continue;
        }
        if (li->type != VF_NODE_ELEMENT || vf_main_skips(li))
            continue;
        if (vf_dom_tag(li).id != VF_T_LI) {
            vf_render_node(e, li);
            continue;
        }
        em_want(e, PEND_LINE);
        if (e->flat) {
            vf_render_children(e, li);
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
        vf_render_children(e, li);
        pop_prefix(e, saved);
        e->marker[0] = '\0'; /* an empty item leaves no marker behind */
        em_want(e, PEND_LINE);
    }
    em_want(e, depth > 0 ? PEND_LINE : PEND_BLANK);
}

static unsigned list_depth(const vf_node *n)
{
    unsigned d = 0;
    for (const vf_node *p = n->parent; p && p->type == VF_NODE_ELEMENT; p = p->parent)
        d += vf_dom_tag(p).id == VF_T_LI;
    return d;
}

static void render_heading(emitter *e, vf_node *h, unsigned level)
{
    if (e->flat) {
        vf_render_children(e, h);
        return;
    }
    em_want(e, PEND_BLANK);
    if (e->o->markdown) {
        memset(e->marker, '#', level);
        e->marker[level] = ' ';
        e->marker[level + 1] = '\0';
        e->marker_prefix = e->prefix_len;
    }
    e->in_heading++;
    vf_render_children(e, h);
    e->in_heading--;
    e->marker[0] = '\0';
    em_want(e, PEND_BLANK);
}

static void render_quote(emitter *e, vf_node *q)
{
    if (e->flat || !e->o->markdown) {
        em_want(e, PEND_BLANK);
        vf_render_children(e, q);
        em_want(e, PEND_BLANK);
        return;
    }
    em_want(e, PEND_BLANK);
    /* The separator before the quote belongs to the outer level. */
    if (e->out.len > 0 && e->pending >= PEND_LINE) {
        em_puts(e, "\n");
        size_t k = e->prefix_len;
        while (k > 0 && e->prefix[k - 1] == ' ')
            k--;
        em_put(e, e->prefix, k);
        e->pending = PEND_LINE;
    }
    size_t saved;
    push_prefix(e, "> ", &saved);
    if (e->out.len == 0 || e->pending == PEND_LINE) {
        if (e->out.len > 0)
            em_puts(e, "\n");
        em_put(e, e->prefix, e->prefix_len);
        e->pending = PEND_NONE;
        e->line_start = true;
    }
    vf_render_children(e, q);
    pop_prefix(e, saved);
    em_want(e, PEND_BLANK);
}

static void render_element(emitter *e, vf_node *el)
{
    if (vf_main_skips(el))
        return;
    vf_tag_info t = vf_dom_tag(el);
    if (t.flags & VF_TAG_DROP)
        return;
    switch (t.id) {
    case VF_T_BR:
        if (e->in_heading || e->flat) {
            em_want(e, PEND_SPACE);
        } else if (!e->line_start && e->out.len > 0) {
            if (e->o->markdown)
                em_puts(e, "\\");
            em_want(e, PEND_LINE);
        }
        return;
    case VF_T_HR:
        if (e->flat)
            return;
        em_want(e, PEND_BLANK);
        if (e->o->markdown) {
            em_flush(e, '-');
            em_puts(e, "---");
            e->last_cp = '-';
        }
        em_want(e, PEND_BLANK);
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
        vf_render_table(e, el);
        return;
    case VF_T_BLOCKQUOTE:
        render_quote(e, el);
        return;
    case VF_T_CODE:
        if (e->o->markdown && !e->flat) {
            e->soft_sep = true;
            em_flush(e, '`');
            em_puts(e, "`");
            size_t start = e->out.len;
            vf_render_opts plain = *e->o;
            plain.markdown = false;
            const vf_render_opts *keep = e->o;
            e->o = &plain;
            vf_render_children(e, el);
            e->o = keep;
            if (e->out.len == start) {
                e->out.len = start - 1; /* nothing inside: no empty `` */
                e->out.data[e->out.len] = '\0';
            } else {
                em_puts(e, "`");
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
        em_want(e, PEND_LINE);
        vf_render_children(e, el);
        em_want(e, PEND_LINE);
        return;
    }
    if (t.flags & VF_TAG_BLOCK) {
        bool para = t.id == VF_T_P || t.id == VF_T_FIGURE || t.id == VF_T_DL ||
                    t.id == VF_T_ADDRESS || t.id == VF_T_DETAILS;
        em_want(e, para ? PEND_BLANK : PEND_LINE);
        vf_render_children(e, el);
        em_want(e, para ? PEND_BLANK : PEND_LINE);
        return;
    }
    if (t.id == VF_T_TD || t.id == VF_T_TH) {
        em_want(e, PEND_SPACE);
        vf_render_children(e, el);
        em_want(e, PEND_SPACE);
        return;
    }
    /* Inline. Formatting never separates words; other boxes may. */
    bool box = !(t.flags & VF_TAG_FORMAT);
    if (box)
        e->soft_sep = true;
    vf_render_children(e, el);
    if (box)
        e->soft_sep = true;
}

void vf_render_node(emitter *e, vf_node *n)
{
    if (e->out.truncated || e->out.oom)
        return;
    if (n->type == VF_NODE_TEXT || n->type == VF_NODE_CDATA) {
        const vf_render_opts *o = e->o;
        if (vf_node_bytes(n) && (!o->text_reached || o->text_reached(o->text_ctx, vf_node_text(n))))
            em_text(e, vf_node_bytes(n));
    } else if (n->type == VF_NODE_ELEMENT) {
        render_element(e, n);
    }
}

void vf_render_children(emitter *e, vf_node *el)
{
    for (vf_node *c = vf_node_first(el); c; c = c->next)
        vf_render_node(e, c);
}

static void append_link_list(emitter *e)
{
    if (e->n_links == 0)
        return;
    em_puts(e, e->out.len ? "\n\n" : "");
    for (size_t i = 0; i < e->n_links; i++) {
        char num[24];
        snprintf(num, sizeof num, e->o->markdown ? "[%zu]: " : "[%zu] ", i + 1);
        em_puts(e, num);
        em_puts(e, e->links[i]);
        if (i + 1 < e->n_links)
            em_puts(e, "\n");
    }
}

char *vf_render(vf_node *const *roots, size_t n_roots, const vf_render_opts *o, size_t *out_len)
{
    emitter e = { .o = o, .line_start = true, .base = o->base_url };
    if (o->out_map_len)
        vf_tbuf_init_mapped(&e.out, o->max_out, VF_PAGE_MAP_HUGE_MIN);
    else
        vf_tbuf_init(&e.out, o->max_out);
    for (size_t i = 0; i < n_roots; i++) {
        vf_node *r = roots[i];
        if (r->type == VF_NODE_ELEMENT && vf_dom_tag(r).id == VF_T_BODY)
            vf_render_children(&e, r);
        else
            vf_render_node(&e, r);
        em_want(&e, PEND_BLANK);
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
    if (o->out_map_len)
        return vf_tbuf_take_any(&e.out, out_len, o->out_map_len);
    return vf_tbuf_take(&e.out, out_len);
}
