#include "worker/content/main_content.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "worker/content/content_hints.h"
#include "worker/content/dom_util.h"
#include "worker/content/page_map.h"
#include "worker/content/tag_class.h"

struct vf_node_stats {
    uint32_t text;      /* collapsed code points under the element */
    uint32_t link;      /* of which inside <a> */
    uint32_t commas;    /* commas and CJK clause marks */
    uint32_t phrasing;  /* code points of its own inline run (text not inside a block child) */
    uint32_t phr_commas;
    uint16_t p, img, li, input;
    float score;
    uint8_t flags;
    uint8_t hints;      /* HINT_*: the element's class/id hints, read once per pick */
    int8_t weight;      /* class/id weight, once HINT_WEIGHT is set (multiples of 25: the
                         * stats stay 36 bytes, one per element of the page) */
};

enum { F_CANDIDATE = 1, F_UNLIKELY = 2, F_CLEANED = 4, F_HAS_BLOCK = 8 };
enum { HINT_KNOWN = 1, HINT_ARTICLE_BODY = 2, HINT_COMMENT = 4, HINT_WEIGHT = 8 };
#define SHORT_LINK_PARA 600u
#define CREDIT_LINE_MAX 300u

enum { WEIGH_CLASSES = 1, STRIP_UNLIKELY = 2, CLEAN = 4 };

typedef struct {
    struct vf_node_stats *stats;
    size_t n, cap;
} collect_ctx;

/* An element's stats: S[aux - 1] (collect numbers them). After
 * vf_main_pick_settle the stats are gone and VF_NODE_SKIPPED marks what the
 * renderer skips. */
static struct vf_node_stats *st_of(struct vf_node_stats *S, const vf_node *n)
{
    return S && n && n->type == VF_NODE_ELEMENT && n->aux ? &S[n->aux - 1] : NULL;
}

/* An element's attributes never change, so neither do its hints: every
 * attempt asks them of every element, and they are read once. */
static uint8_t hints_of(struct vf_node_stats *st, const vf_node *el)
{
    if (!(st->hints & HINT_KNOWN))
        st->hints |= HINT_KNOWN | (vf_hint_article_body(el) ? HINT_ARTICLE_BODY : 0) |
                     (vf_hint_comment_thread(el) ? HINT_COMMENT : 0);
    return st->hints;
}

static float class_weight(struct vf_node_stats *st, const vf_node *el)
{
    if (st->hints & HINT_WEIGHT)
        return st->weight;
    float w = vf_hint_class_weight(el);
    if (w >= -128 && w <= 127 && w == (float)(int8_t)w) { /* kept only when exact */
        st->weight = (int8_t)w;
        st->hints |= HINT_WEIGHT;
    }
    return w;
}

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* ASCII that counts one character and nothing else: not NUL, not blank,
 * no comma. A table: this runs over every text node of a page. */
static const unsigned char plain_byte[256] = {
    0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static void count_text(const unsigned char *p, uint32_t *chars, uint32_t *commas)
{
    bool space = true;
    uint32_t k = 0, c = 0;
    for (; *p; p++) {
        if (plain_byte[*p]) {
            /* Words joined by one plain space: the space counts one like them. */
            const unsigned char *run = p;
            for (;;) {
                while (plain_byte[p[1]])
                    p++;
                if (p[1] != ' ' || !plain_byte[p[2]])
                    break;
                p += 2;
            }
            k += (uint32_t)(p - run) + 1;
            space = false;
            continue;
        }
        if (is_space(*p)) {
            if (!space)
                k++;
            space = true;
            continue;
        }
        space = false;
        if ((*p & 0xC0) != 0x80)
            k++;
        if (*p == ',')
            c++;
        else if (p[0] == 0xEF && p[1] == 0xBC && p[2] == 0x8C) /* U+FF0C fullwidth comma */
            c++;
        else if (p[0] == 0xE3 && p[1] == 0x80 && (p[2] == 0x81 || p[2] == 0x82)) /* 、。 */
            c++;
    }
    if (space && k > 0)
        k--; /* the trailing blank */
    *chars += k + (k > 0); /* one separator toward the next run */
    *commas += c;
}

static size_t count_elements(vf_node *root)
{
    size_t k = 0;
    for (vf_node *n = root; n; n = vf_dom_next(n, root, false))
        k += n->type == VF_NODE_ELEMENT;
    return k;
}

static void collect(vf_node *el, bool in_link, collect_ctx *c)
{
    struct vf_node_stats *S = c->stats;
    if (c->n >= c->cap)
        return;
    struct vf_node_stats *st = &c->stats[c->n++];
    el->aux = (uint32_t)c->n;
    vf_tag_info t = vf_dom_tag(el);
    bool link = in_link || t.id == VF_T_A;
    for (vf_node *ch = vf_node_first(el); ch; ch = ch->next) {
        if (ch->type == VF_NODE_TEXT && vf_node_bytes(ch)) {
            uint32_t k = 0, cm = 0;
            count_text(vf_node_bytes(ch), &k, &cm);
            st->text += k;
            st->commas += cm;
            st->phrasing += k;
            st->phr_commas += cm;
            if (link)
                st->link += k;
        } else if (ch->type == VF_NODE_ELEMENT) {
            collect(ch, link, c);
            struct vf_node_stats *cs = st_of(S, ch);
            if (!cs)
                continue;
            st->text += cs->text;
            st->link += cs->link;
            st->commas += cs->commas;
            st->p += cs->p;
            st->img += cs->img;
            st->li += cs->li;
            st->input += cs->input;
            vf_tag_info ct = vf_dom_tag(ch);
            if ((ct.flags & VF_TAG_BLOCK) || (cs->flags & F_HAS_BLOCK)) {
                st->flags |= F_HAS_BLOCK;
            } else {
                st->phrasing += cs->text;
                st->phr_commas += cs->commas;
            }
        }
    }
    if (t.id == VF_T_P)
        st->p++;
    else if (t.id == VF_T_IMG)
        st->img++;
    else if (t.id == VF_T_LI)
        st->li++;
    else if (t.id == VF_T_INPUT || t.id == VF_T_TEXTAREA)
        st->input++;
}

static void init_candidate(struct vf_node_stats *S, vf_node *el, int flags)
{
    struct vf_node_stats *st = st_of(S, el);
    if (!st || (st->flags & F_CANDIDATE))
        return;
    st->flags |= F_CANDIDATE;
    vf_tag_info t = vf_dom_tag(el);
    float s = 0;
    switch (t.id) {
    case VF_T_DIV: s = 5; break;
    case VF_T_ARTICLE: s = 10; break;
    case VF_T_MAIN: s = 5; break;
    case VF_T_PRE: case VF_T_TD: case VF_T_BLOCKQUOTE: s = 3; break;
    case VF_T_ADDRESS: case VF_T_OL: case VF_T_UL: case VF_T_DL: case VF_T_DD: case VF_T_DT:
    case VF_T_LI: case VF_T_FORM: s = -3; break;
    case VF_T_H1: case VF_T_H2: case VF_T_H3: case VF_T_H4: case VF_T_H5: case VF_T_H6:
    case VF_T_TH: s = -5; break;
    default: break;
    }
    if (hints_of(st, el) & HINT_ARTICLE_BODY)
        s += 15;
    if (flags & WEIGH_CLASSES)
        s += class_weight(st, el);
    st->score = s;
}

/* A custom element (<article-body>, <story-text>) is taken for a div; the
 * known inline ones (em, span, a...) are part of a paragraph, never a block. */
static bool is_custom(vf_tag_info t)
{
    return t.id == VF_T_OTHER && !(t.flags & VF_TAG_KNOWN);
}

static float link_density(const struct vf_node_stats *st)
{
    return st->text ? (float)st->link / (float)st->text : 0.0f;
}

static bool is_unlikely(struct vf_node_stats *st, const vf_node *el)
{
    vf_tag_info t = vf_dom_tag(el);
    if (t.id == VF_T_BODY || t.id == VF_T_HTML || t.id == VF_T_A || t.id == VF_T_ARTICLE ||
        t.id == VF_T_MAIN || t.id == VF_T_TABLE || t.id == VF_T_TBODY || t.id == VF_T_TR ||
        t.id == VF_T_TD || t.id == VF_T_TH || t.id == VF_T_P || (hints_of(st, el) & HINT_ARTICLE_BODY))
        return false;
    return vf_hint_unlikely(el);
}

/* Readers' comments are never the article, whichever attempt this is. */
static bool is_comment_thread(struct vf_node_stats *st, const vf_node *el)
{
    vf_tag_info t = vf_dom_tag(el);
    if (t.id == VF_T_BODY || t.id == VF_T_ARTICLE || t.id == VF_T_MAIN)
        return false;
    uint8_t h = hints_of(st, el);
    return !(h & HINT_ARTICLE_BODY) && (h & HINT_COMMENT);
}

/* One paragraph's vote: its container gets it whole, the next ancestor
 * half, the ones above a third per level, five levels up. */
static void vote(struct vf_node_stats *S, vf_node *container, uint32_t chars, uint32_t commas, int flags)
{
    float score = 1.0f + (float)commas + (float)(chars / 100 < 3 ? chars / 100 : 3);
    int level = 0;
    for (vf_node *a = container; a && a->type == VF_NODE_ELEMENT && level < 5;
         a = a->parent, level++) {
        vf_tag_info t = vf_dom_tag(a);
        if (t.id == VF_T_HTML)
            break;
        init_candidate(S, a, flags);
        float div = level == 0 ? 1.0f : level == 1 ? 2.0f : (float)level * 3.0f;
        st_of(S, a)->score += score / div;
    }
}

static void score_all(struct vf_node_stats *S, vf_node *body, int flags)
{
    vf_node *n = body;
    while (n) {
        struct vf_node_stats *st = st_of(S, n);
        if (!st) {
            n = vf_dom_next(n, body, false);
            continue;
        }
        if (n != body && (((flags & STRIP_UNLIKELY) && is_unlikely(st, n)) || is_comment_thread(st, n))) {
            st->flags |= F_UNLIKELY;
            n = vf_dom_next(n, body, true);
            continue;
        }
        vf_tag_info t = vf_dom_tag(n);
        bool para = t.id == VF_T_P || t.id == VF_T_PRE || t.id == VF_T_TD;
        bool inline_div = (t.id == VF_T_DIV || t.id == VF_T_SECTION || is_custom(t)) &&
                          !(st->flags & F_HAS_BLOCK);
        if ((para || inline_div) && st->text >= 25 && n->parent && n != body) {
            vote(S, n->parent, st->text, st->commas, flags);
        } else if ((t.flags & VF_TAG_BLOCK) && (st->flags & F_HAS_BLOCK) && st->phrasing >= 25 &&
                   t.id != VF_T_LI) {
            vote(S, n, st->phrasing, st->phr_commas, flags); /* text runs between its blocks */
        }
        /* A paragraph's inside is not scored again. */
        n = vf_dom_next(n, body, para || inline_div);
    }
}

static bool skipped_flag(struct vf_node_stats *S, const vf_node *el, int mask)
{
    if (el->flags & VF_NODE_SKIPPED)
        return true; /* settled: only the renderer's question is asked now */
    struct vf_node_stats *st = st_of(S, el);
    return st && (st->flags & mask);
}

/* Code points of the text under root, skipped elements left out. Once the
 * stats exist (collect counted every text node into its element's total)
 * that is root's total less the totals of its outermost skipped elements: no
 * text is read again. Settled, the text itself is counted. */
static size_t kept_text(struct vf_node_stats *S, vf_node *root)
{
    struct vf_node_stats *rs = st_of(S, root);
    size_t k = rs ? rs->text : 0;
    vf_node *n = root;
    while (n) {
        if (n->type == VF_NODE_ELEMENT && n != root && skipped_flag(S, n, F_UNLIKELY | F_CLEANED)) {
            struct vf_node_stats *st = st_of(S, n);
            if (rs && st)
                k -= st->text;
            n = vf_dom_next(n, root, true);
            continue;
        }
        if (!rs && n->type == VF_NODE_TEXT && vf_node_bytes(n)) {
            uint32_t c = 0, cm = 0;
            count_text(vf_node_bytes(n), &c, &cm);
            k += c;
        }
        n = vf_dom_next(n, root, false);
    }
    return k;
}

static bool is_list(vf_tag_info t)
{
    return t.id == VF_T_UL || t.id == VF_T_OL;
}

/* Readability-style conditional cleaning of one block inside the pick. */
static bool should_clean(struct vf_node_stats *S, vf_node *el, int flags)
{
    vf_tag_info t = vf_dom_tag(el);
    struct vf_node_stats *st = st_of(S, el);
    if (!st)
        return false;
    /* Captions and photo credits describe a picture the reader does not get;
     * a byline or dateline repeats what the receipt's metadata says. */
    if (t.id == VF_T_FIGCAPTION)
        return true;
    if (st->text < CREDIT_LINE_MAX && vf_hint_credit_line(el))
        return true;
    bool heading = (t.flags & VF_TAG_HEADING) != 0;
    if (heading)
        return (flags & WEIGH_CLASSES) && (class_weight(st, el) < 0 || link_density(st) > 0.33f);
    /* A short paragraph that is all link is a teaser for another page
     * ("READ MORE: ..."), not part of this one. */
    if (t.id == VF_T_P)
        return st->text < SHORT_LINK_PARA && link_density(st) >= 0.8f;
    if (!(t.id == VF_T_DIV || t.id == VF_T_SECTION || t.id == VF_T_UL || t.id == VF_T_OL ||
          t.id == VF_T_TABLE || t.id == VF_T_DL || is_custom(t) || t.id == VF_T_FIGURE))
        return false;
    float weight = (flags & WEIGH_CLASSES) ? class_weight(st, el) : 0;
    float cscore = (st->flags & F_CANDIDATE) ? st->score : 0;
    if (weight + cscore < 0)
        return true;
    if (st->commas >= 10)
        return false;
    float ld = link_density(st);
    float p = st->p, img = st->img, li = st->li, input = st->input;
    bool list = is_list(t);
    if (t.id == VF_T_FIGURE)
        return ld > 0.5f;
    if (img > 1 && p / img < 0.5f)
        return true;
    if (!list && li > p + 1 && ld > 0.2f)
        return true;
    if (input > p / 3)
        return true;
    if (!list && st->text < 25 && (img == 0 || img > 2) && t.id != VF_T_TABLE)
        return true;
    if (weight < 25 && ld > 0.2f)
        return true;
    if (weight >= 25 && ld > 0.5f)
        return true;
    return false;
}

static void clean_part(struct vf_node_stats *S, vf_node *part, int flags)
{
    vf_node *n = vf_node_first(part) ? vf_node_first(part) : NULL;
    while (n) {
        if (n->type != VF_NODE_ELEMENT) {
            n = vf_dom_next(n, part, true);
            continue;
        }
        if (skipped_flag(S, n, F_UNLIKELY)) {
            n = vf_dom_next(n, part, true);
            continue;
        }
        if (should_clean(S, n, flags)) {
            st_of(S, n)->flags |= F_CLEANED;
            n = vf_dom_next(n, part, true);
            continue;
        }
        n = vf_dom_next(n, part, false);
    }
}

static bool same_class(const vf_node *a, const vf_node *b)
{
    const char *ca = vf_dom_attr(a, "class"), *cb = vf_dom_attr(b, "class");
    return ca && cb && ca[0] && strcmp(ca, cb) == 0;
}

static bool ends_sentence(const vf_node *el)
{
    /* Last non-blank byte of the last text under el. */
    const vf_node *last = NULL;
    for (vf_node *n = (vf_node *)el; n; n = vf_dom_next(n, el, false))
        if (n->type == VF_NODE_TEXT && vf_node_bytes(n) && vf_node_bytes(n)[0])
            last = n;
    if (!last)
        return false;
    size_t len = strlen((const char *)vf_node_bytes(last));
    while (len > 0 && is_space(vf_node_bytes(last)[len - 1]))
        len--;
    return len > 0 && (vf_node_bytes(last)[len - 1] == '.' || vf_node_bytes(last)[len - 1] == 0x82);
}

static vf_node *top_candidate(struct vf_node_stats *S, vf_node *body)
{
    vf_node *top = NULL;
    float best = 0;
    for (vf_node *n = body; n; n = vf_dom_next(n, body, false)) {
        struct vf_node_stats *st = st_of(S, n);
        if (!st || !(st->flags & F_CANDIDATE))
            continue;
        if (st->flags & F_UNLIKELY)
            continue;
        float s = st->score * (1.0f - link_density(st));
        if (!top || s > best) {
            top = n;
            best = s;
        }
    }
    return top;
}

static float final_score(struct vf_node_stats *S, const vf_node *n)
{
    struct vf_node_stats *st = st_of(S, n);
    return st && (st->flags & F_CANDIDATE) ? st->score * (1.0f - link_density(st)) : 0;
}

static size_t element_children(const vf_node *n)
{
    size_t k = 0;
    for (const vf_node *c = vf_node_first(n); c; c = c->next)
        k += c->type == VF_NODE_ELEMENT;
    return k;
}

static bool has_own_text(const vf_node *n)
{
    for (const vf_node *c = vf_node_first(n); c; c = c->next)
        if (c->type == VF_NODE_TEXT && vf_node_bytes(c))
            for (const unsigned char *p = vf_node_bytes(c); *p; p++)
                if (!is_space(*p))
                    return true;
    return false;
}

/* Readability's view of a paragraph: a <p>, a div holding only inline
 * content, or wrappers around exactly one such (div > p); not a block whose
 * name says it stands beside the text. */
static bool para_like(struct vf_node_stats *S, vf_node *n)
{
    for (int depth = 0; depth < 4; depth++) {
        vf_tag_info t = vf_dom_tag(n);
        struct vf_node_stats *st = st_of(S, n);
        if (vf_hint_beside_text(n))
            return false;
        if (t.id == VF_T_P)
            return true;
        if (!st || !(t.id == VF_T_DIV || t.id == VF_T_SECTION || is_custom(t)))
            return false;
        if (!(st->flags & F_HAS_BLOCK))
            return true;
        if (element_children(n) != 1 || has_own_text(n))
            return false;
        vf_node *c = vf_node_first(n);
        while (c->type != VF_NODE_ELEMENT)
            c = c->next;
        n = c;
    }
    return false;
}

static bool same_element(const vf_node *a, const vf_node *b)
{
    return vf_node_is_element(a) && vf_node_is_element(b) && a->name_id == b->name_id &&
           same_class(a, b);
}

static size_t doc_order(const vf_main_pick *pick, const vf_node *n)
{
    struct vf_node_stats *S = pick->stats;
    return (size_t)(st_of(S, n) - pick->stats);
}

/* Articles cut into chunks (a figure or an ad between them) repeat the
 * chunk's wrapper: a wrapper of the pick, up to two levels above it, with
 * siblings of the same tag and class that hold paragraphs brings those in. */
static void add_repeated_chunks(vf_node *body, vf_node *top, vf_main_pick *pick)
{
    struct vf_node_stats *S = pick->stats;
    vf_node *a = top->parent;
    for (int level = 1; level <= 2 && a && a != body && a->type == VF_NODE_ELEMENT;
         level++, a = a->parent) {
        for (vf_node *s = a->parent ? vf_node_first(a->parent) : NULL; s; s = s->next) {
            struct vf_node_stats *st = st_of(S, s);
            if (s == a || !st || !same_element(s, a) || (st->flags & F_UNLIKELY))
                continue;
            if (st->p == 0 || st->text < 100 || link_density(st) > 0.33f ||
                pick->n_parts >= VF_MAIN_MAX_PARTS)
                continue;
            pick->parts[pick->n_parts++] = s;
        }
    }
    /* Back into document order (insertion sort: a handful of parts). */
    for (size_t i = 1; i < pick->n_parts; i++) {
        vf_node *n = pick->parts[i];
        size_t j = i;
        for (; j > 0 && doc_order(pick, pick->parts[j - 1]) > doc_order(pick, n); j--)
            pick->parts[j] = pick->parts[j - 1];
        pick->parts[j] = n;
    }
}

static void gather(vf_node *body, vf_node *top, vf_main_pick *pick)
{
    struct vf_node_stats *S = pick->stats;
    pick->n_parts = 0;
    /* A lone child says nothing its parent does not; a parent that outscores
     * its best child holds the content in several children. */
    for (;;) {
        vf_node *up = top->parent;
        if (!up || up == body || up->type != VF_NODE_ELEMENT)
            break;
        if (element_children(up) == 1 || final_score(S, up) >= final_score(S, top))
            top = up;
        else
            break;
    }
    float top_score = final_score(S, top);
    float threshold = top_score * 0.2f > 10 ? top_score * 0.2f : 10;
    vf_node *parent = top->parent;
    if (!parent || top == body) {
        pick->parts[pick->n_parts++] = top;
        return;
    }
    for (vf_node *s = vf_node_first(parent); s && pick->n_parts < VF_MAIN_MAX_PARTS; s = s->next) {
        if (s->type != VF_NODE_ELEMENT)
            continue;
        bool take = s == top;
        struct vf_node_stats *st = st_of(S, s);
        if (!take && st && !(st->flags & F_UNLIKELY)) {
            float bonus = same_class(s, top) ? top_score * 0.2f : 0;
            if ((st->flags & F_CANDIDATE) && final_score(S, s) + bonus >= threshold) {
                take = true;
            } else if (para_like(S, s)) {
                float ld = link_density(st);
                if (st->text > 80 && ld < 0.25f)
                    take = true;
                else if (st->text > 0 && st->text <= 80 && ld == 0 && ends_sentence(s))
                    take = true;
            }
        }
        if (take)
            pick->parts[pick->n_parts++] = s;
    }
    add_repeated_chunks(body, top, pick);
}

static void reset(vf_main_pick *pick)
{
    for (size_t i = 0; i < pick->n_stats; i++) {
        pick->stats[i].score = 0;
        pick->stats[i].flags &= F_HAS_BLOCK;
    }
}

static size_t attempt(vf_node *body, vf_main_pick *pick, int flags)
{
    struct vf_node_stats *S = pick->stats;
    reset(pick);
    score_all(S, body, flags);
    vf_node *top = top_candidate(S, body);
    if (!top) {
        pick->n_parts = 0;
        return 0;
    }
    gather(body, top, pick);
    size_t chars = 0;
    for (size_t i = 0; i < pick->n_parts; i++) {
        if (flags & CLEAN)
            clean_part(S, pick->parts[i], flags);
        chars += kept_text(S, pick->parts[i]);
    }
    return chars;
}

/* Zeroed stats for n elements. A large page's (15,000 paragraphs: half a
 * MiB) get a mapping of their own in huge pages where the kernel gives them:
 * from the heap they were mapped afresh and faulted in page by page, in a
 * worker that lives for one page. */
static void stats_alloc(vf_main_pick *pick, size_t n)
{
    if (n > SIZE_MAX / sizeof *pick->stats)
        return;
    size_t bytes = n * sizeof *pick->stats;
    if (bytes < VF_PAGE_MAP_HUGE_MIN) {
        pick->stats = calloc(n ? n : 1, sizeof *pick->stats);
        return;
    }
    size_t len = vf_page_map_len(bytes);
    pick->stats = len != SIZE_MAX ? vf_page_map_resize(NULL, 0, len) : NULL;
    pick->stats_mapped = pick->stats ? len : 0;
}

static void stats_release(vf_main_pick *pick)
{
    if (pick->stats_mapped)
        munmap(pick->stats, pick->stats_mapped);
    else
        free(pick->stats);
    pick->stats = NULL;
    pick->stats_mapped = 0;
}

bool vf_main_pick_content(vf_node *body, vf_main_pick *pick)
{
    memset(pick, 0, sizeof *pick);
    size_t n = count_elements(body);
    stats_alloc(pick, n);
    if (!pick->stats) {
        pick->page_chars = vf_dom_text_len(body);
        return false;
    }
    collect_ctx c = { pick->stats, 0, n };
    collect(body, false, &c);
    pick->n_stats = c.n;
    pick->page_chars = kept_text(pick->stats, body);

    static const int attempts[] = {
        WEIGH_CLASSES | STRIP_UNLIKELY | CLEAN, WEIGH_CLASSES | CLEAN, CLEAN, 0,
    };
    int best_flags = -1;
    size_t best_chars = 0;
    bool settled = false;
    for (size_t i = 0; i < sizeof attempts / sizeof attempts[0]; i++) {
        size_t chars = attempt(body, pick, attempts[i]);
        if (chars >= 500) {
            best_flags = attempts[i];
            best_chars = chars;
            settled = true;
            break;
        }
        /* A looser attempt must find clearly more, not merely what cleaning removed. */
        if (chars > best_chars + best_chars / 4) {
            best_chars = chars;
            best_flags = attempts[i];
        }
    }
    if (best_flags < 0 || best_chars < VF_MAIN_MIN_CHARS) {
        reset(pick);
        pick->n_parts = 0;
        return false;
    }
    if (!settled)
        best_chars = attempt(body, pick, best_flags);
    pick->main_chars = best_chars;
    return pick->n_parts > 0;
}

size_t vf_main_text_chars(vf_node *root)
{
    struct vf_node_stats *S = NULL; /* settled: only VF_NODE_SKIPPED is left */
    return root ? kept_text(S, root) : 0;
}

bool vf_main_skips(const vf_node *el)
{
    struct vf_node_stats *S = NULL;
    return skipped_flag(S, el, F_UNLIKELY | F_CLEANED);
}

bool vf_main_contains(const vf_main_pick *pick, const vf_node *n)
{
    for (; n; n = n->parent)
        for (size_t i = 0; i < pick->n_parts; i++)
            if (pick->parts[i] == n)
                return true;
    return false;
}

void vf_main_pick_settle(vf_node *body, vf_main_pick *pick)
{
    if (!body || !pick->stats)
        return;
    for (vf_node *n = body; n; n = vf_dom_next(n, body, false))
        if (n->type == VF_NODE_ELEMENT)
        {
            if (skipped_flag(pick->stats, n, F_UNLIKELY | F_CLEANED))
                n->flags |= VF_NODE_SKIPPED;
            n->aux = 0;
        }
    stats_release(pick);
    pick->settled = true;
}

void vf_main_pick_free(vf_node *body, vf_main_pick *pick)
{
    if (body && (pick->stats || pick->settled))
        for (vf_node *n = body; n; n = vf_dom_next(n, body, false))
            if (n->type == VF_NODE_ELEMENT) {
                n->flags &= (uint8_t)~VF_NODE_SKIPPED;
                n->aux = 0;
            }
    stats_release(pick);
    memset(pick, 0, sizeof *pick);
}
