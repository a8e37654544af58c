/* The page's compact tree (dom_tree.c, dom_build.c) and the parser glue's
 * bounds (html_dom.c): text runs merge across arena chunks, attribute runs
 * and names survive the arena's growth, the tree stops at its byte bound,
 * and the pruner unlinks many siblings in linear time. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker/content/attr_store.h"
#include "worker/content/dom_build.h"
#include "worker/content/dom_util.h"
#include "worker/content/extract_html.h"
#include "worker/content/html_dom.h"
#include "worker/content/prune.h"

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void write_pairs(char *dst, const void *pairs)
{
    vf_attr_run_write(dst, pairs);
}

static vf_node *open_el(vf_dom_builder *b, const char *name, const char *const *pairs)
{
    vf_dom_status st = VF_DOM_OK;
    vf_node *el = vf_build_open(b, name, vf_attr_run_size(pairs), write_pairs, pairs, false, &st);
    cr_assert_not_null(el, "status %d", (int)st);
    return el;
}

/* One text node takes every piece added next to it, whether it grows in
 * place, moves to a fresh chunk or outgrows any chunk; a text run between
 * two elements starts a new node. */
Test(dom_tree, adjacent_text_merges_across_chunks_and_stays_exact)
{
    vf_dom *d = vf_dom_new(64u << 20);
    vf_dom_builder b;
    cr_assert(vf_build_init(&b, d));
    vf_node *div = open_el(&b, "div", NULL);
    enum { PIECES = 3000, PIECE = 1000 };
    char piece[PIECE];
    for (int i = 0; i < PIECES; i++) {
        memset(piece, 'a' + i % 26, PIECE);
        cr_assert_eq(vf_build_text(&b, VF_NODE_TEXT, piece, PIECE), VF_DOM_OK);
        if (i % 500 == 0) { /* other text elsewhere: the run is not the newest any more */
            vf_node *p = open_el(&b, "p", NULL);
            cr_assert_eq(vf_build_text(&b, VF_NODE_TEXT, "x", 1), VF_DOM_OK);
            vf_build_close(&b);
            cr_assert_eq(vf_node_first(p)->aux, 1);
        }
    }
    vf_build_close(&b);
    vf_build_done(&b);
    /* div: text, p, text, p, ... : each text run between two p's is one node. */
    size_t total = 0, runs = 0;
    for (vf_node *c = vf_node_first(div); c; c = c->next) {
        if (c->type != VF_NODE_TEXT)
            continue;
        cr_assert_eq(strlen(vf_node_text(c)), c->aux);
        total += c->aux;
        runs++;
    }
    cr_assert_eq(total, (size_t)PIECES * PIECE);
    cr_assert_eq(runs, PIECES / 500 + 1);
    const char *last = NULL;
    for (vf_node *c = vf_node_first(div); c; c = c->next)
        if (c->type == VF_NODE_TEXT)
            last = vf_node_text(c);
    /* The last run holds pieces 2501..2999, each its own letter. */
    cr_assert_eq(last[0], 'a' + 2501 % 26);
    cr_assert_eq(last[PIECE], 'a' + 2502 % 26);
    vf_dom_free(d);
}

/* Runs stay valid as the node arena grows past its chunks, including a
 * value larger than any chunk (a data: URI in src). */
Test(dom_tree, attribute_runs_survive_many_chunks_and_huge_values)
{
    vf_dom *d = vf_dom_new(64u << 20);
    vf_dom_builder b;
    cr_assert(vf_build_init(&b, d));
    open_el(&b, "body", NULL);
    enum { N = 20000 };
    vf_node **els = calloc(N, sizeof *els);
    cr_assert_not_null(els);
    char id[32];
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "card-%d", i);
        const char *pairs[] = { "id", id, "class", "c", NULL };
        els[i] = open_el(&b, "div", pairs);
        vf_build_close(&b);
    }
    size_t big_len = 3u << 20;
    char *big = malloc(big_len + 1);
    cr_assert_not_null(big);
    memset(big, 'x', big_len);
    big[big_len] = '\0';
    const char *pairs[] = { "src", big, NULL };
    vf_node *img = open_el(&b, "img", pairs);
    vf_build_close(&b);
    for (int i = 0; i < N; i += 997) {
        snprintf(id, sizeof id, "card-%d", i);
        cr_assert_str_eq(vf_dom_attr(els[i], "id"), id);
        cr_assert_str_eq(vf_dom_attr(els[i], "CLASS"), "c");
    }
    cr_assert_eq(strlen(vf_dom_attr(img, "src")), big_len);
    cr_assert_null(vf_dom_attr(img, "alt"));
    free(big);
    free(els);
    vf_build_done(&b);
    vf_dom_free(d);
}

/* Unknown tag names keep their identity (the scorer compares wrappers by
 * name) and their spelling; known ones map to tag_class. */
Test(dom_tree, names_are_interned_and_kept)
{
    vf_dom *d = vf_dom_new(1u << 20);
    vf_dom_builder b;
    cr_assert(vf_build_init(&b, d));
    vf_node *a = open_el(&b, "story-text", NULL);
    vf_node *p = open_el(&b, "p", NULL);
    vf_build_close(&b);
    vf_node *a2 = open_el(&b, "story-text", NULL);
    vf_node *other = open_el(&b, "story-body", NULL);
    cr_assert_eq(a->name_id, a2->name_id);
    cr_assert_neq(a->name_id, other->name_id);
    cr_assert_str_eq(vf_dom_name(d, a2), "story-text");
    cr_assert_str_eq(vf_dom_name(d, other), "story-body");
    cr_assert_str_eq(vf_dom_name(d, p), "p");
    cr_assert_eq(vf_dom_tag(p).id, VF_T_P);
    cr_assert_eq(vf_dom_tag(a).id, VF_T_OTHER);
    cr_assert_eq(vf_dom_tag(a).flags & VF_TAG_KNOWN, 0);
    vf_build_done(&b);
    vf_dom_free(d);
}

Test(dom_tree, a_full_tree_refuses_more_nodes)
{
    vf_dom *d = vf_dom_new(64u << 10);
    vf_dom_builder b;
    cr_assert(vf_build_init(&b, d));
    vf_dom_status st = VF_DOM_OK;
    size_t opened = 0;
    while (vf_build_open(&b, "p", 0, write_pairs, NULL, false, &st)) {
        vf_build_close(&b);
        opened++;
    }
    cr_assert_eq(st, VF_DOM_FULL);
    cr_assert_gt(opened, 1000);
    cr_assert_leq(vf_dom_bytes(d), 64u << 10);
    vf_build_done(&b);
    vf_dom_free(d);
}

/* "<p>" costs 3 bytes of page and 32 of tree: the tree stops at its bound
 * and keeps what it has. */
Test(dom_tree, a_page_of_empty_paragraphs_stops_at_the_tree_bound)
{
    size_t n = 2000000;
    char *page = malloc(3 * n + 16);
    cr_assert_not_null(page);
    strcpy(page, "first");
    for (size_t i = 0; i < n; i++)
        memcpy(page + 5 + 3 * i, "<p>", 3);
    page[5 + 3 * n] = '\0';
    size_t len = strlen(page);
    vf_dom *d = vf_html_parse(page, len, NULL, NULL);
    cr_assert_not_null(d);
    cr_assert_leq(vf_dom_bytes(d), len * VF_HTML_TREE_MULTIPLE + VF_HTML_TREE_SLACK);
    vf_dom_free(d);
    size_t out;
    char *t = vf_html_to_text(page, len, 4096, &out);
    cr_assert_not_null(t);
    cr_assert_str_eq(t, "first");
    free(t);
    free(page);
}

/* Word's <o:p> is a paragraph, as libxml2's tree builder made it. */
Test(dom_tree, prefixed_names_keep_their_local_part)
{
    const char *html = "<body><o:p>one</o:p><o:p>two</o:p></body>";
    size_t n;
    char *t = vf_html_to_text(html, strlen(html), 4096, &n);
    cr_assert_not_null(t);
    cr_assert_str_eq(t, "one\n\ntwo");
    free(t);
}

/* Nodes have no prev pointer: the pruner unlinks with the previous sibling
 * at hand. A search for it per dropped node would be quadratic here. */
Test(dom_tree, pruning_many_siblings_is_linear)
{
    size_t n = 200000;
    const char *unit = "<span hidden>x</span>";
    size_t u = strlen(unit);
    char *page = malloc(u * n + 64);
    cr_assert_not_null(page);
    strcpy(page, "<body>kept");
    size_t o = strlen(page);
    for (size_t i = 0; i < n; i++, o += u)
        memcpy(page + o, unit, u);
    strcpy(page + o, "end</body>");
    vf_dom *d = vf_html_parse(page, strlen(page), NULL, NULL);
    cr_assert_not_null(d);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    vf_prune_report rep;
    vf_prune(vf_dom_root(d), &rep);
    double s = seconds_since(&t0);
    cr_assert_lt(s, 1.0, "took %.2f s", s);
    char *all = vf_dom_text_content(vf_dom_root(d));
    cr_assert_str_eq(all, "keptend");
    free(all);
    vf_dom_free(d);
    free(page);
}
