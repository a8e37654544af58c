/* A large page's tree lives in mappings (dom_tree.h, vf_dom_map): the
 * renderer hands its text back as it passes it (vf_dom_text_reached), so
 * the tree's text does not sit beside the rendered text (issue 15). The
 * text that comes out is the same as with the tree's text kept whole, on
 * every path that reads text: paragraphs, entities, long merged runs,
 * lists, quotes, code, links, images and tables whose caption stands after
 * their rows (a table renders its caption first). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/content/dom_build.h"
#include "worker/content/dom_util.h"
#include "worker/content/dom_tree.h"
#include "worker/content/html_dom.h"
#include "worker/content/main_content.h"
#include "worker/content/prune.h"
#include "worker/content/render.h"
#include "worker/content/tag_class.h"
#include "proc_peak.h"

static const char *const pieces[] = {
    "<p>Paragraph %u: the river &amp; the stone &mdash; a garden, a window.</p>\n",
    "<table><tr><td>cell %u</td><td><a href=\"/x/%u\">link</a></td></tr><caption>after %u</caption></table>\n",
    "<ul><li>item %u</li><li>item &hellip; <b>bold</b> <img src=\"/i/%u.png\" alt=\"pic %u\"></li></ul>\n",
    "<pre>  kept %u\n  code %u  </pre><blockquote>quoted %u, said <code>x%u</code></blockquote>\n",
    "<h2>Heading %u</h2><div><p>inner %u, with <a href=\"https://e.example/%u\">a link</a>.</p></div>\n",
};

/* len bytes of the pieces above; every 97th piece is a run of text far
 * longer than a tree chunk, which the parser hands over in many calls, and
 * every 97th from the 50th a table with rows as long. */
static char *mixed_page(size_t len)
{
    char *b = malloc(len + 1);
    cr_assert_not_null(b);
    size_t pos = (size_t)snprintf(b, len + 1, "<!doctype html><html><head><title>release</title></head><body>\n");
    for (unsigned n = 0; pos < len; n++) {
        char one[400];
        int w = snprintf(one, sizeof one, pieces[n % 5], n, n, n, n);
        if (n % 97 == 50 && len - pos > (270u << 10)) {
            /* A caption after rows longer than a tree chunk. */
            pos += (size_t)snprintf(b + pos, len + 1 - pos, "<table>");
            for (int r = 0; r < 256; r++) {
                pos += (size_t)snprintf(b + pos, len + 1 - pos, "<tr><td>");
                memset(b + pos, 'a' + r % 26, 1024);
                pos += 1024;
                pos += (size_t)snprintf(b + pos, len + 1 - pos, "</td><td>%d</td></tr>", r);
            }
            pos += (size_t)snprintf(b + pos, len + 1 - pos, "<caption>late %u</caption></table>", n);
            continue;
        }
        if (n % 97 == 96) {
            size_t run = len - pos < (300u << 10) ? len - pos : (300u << 10);
            memcpy(b + pos, "<p>", run < 3 ? run : 3);
            for (size_t i = 3; i < run; i++)
                b[pos + i] = (i % 7 == 0) ? ' ' : (i % 11 == 0 ? ',' : 'a' + (char)(i % 26));
            pos += run;
            continue;
        }
        size_t take = (size_t)w < len - pos ? (size_t)w : len - pos;
        memcpy(b + pos, one, take);
        pos += take;
    }
    b[len] = '\0';
    return b;
}

static vf_node *body_of(vf_dom *d)
{
    vf_node *root = vf_dom_root(d);
    for (vf_node *c = root ? vf_node_first(root) : NULL; c; c = c->next)
        if (c->type == VF_NODE_ELEMENT && vf_dom_tag(c).id == VF_T_BODY)
            return c;
    return root;
}

static bool reached(void *ctx, const char *text)
{
    return vf_dom_text_reached(ctx, text);
}

/* The extractor's path: parse, prune, pick (unless whole), render. */
static char *render_page(const char *page, size_t len, bool whole, bool markdown, bool give_back, size_t *out_len)
{
    vf_html_input in = { .data = page, .len = len };
    vf_dom *d = vf_html_parse_streamed(&in);
    cr_assert_not_null(d);
    vf_prune_report rep = { 0 };
    vf_prune(vf_dom_root(d), &rep);
    vf_node *body = body_of(d);
    vf_main_pick pick = { 0 };
    bool main = !whole && vf_main_pick_content(body, &pick);
    vf_main_pick_settle(body, &pick);
    vf_render_opts ro = { .markdown = markdown, .links = VF_LINKS_LIST, .max_out = 4 * len,
                          .text_reached = give_back ? reached : NULL, .text_ctx = d };
    char *text = main ? vf_render(pick.parts, pick.n_parts, &ro, out_len) : vf_render(&body, 1, &ro, out_len);
    cr_assert_not_null(text);
    vf_main_pick_free(body, &pick);
    vf_dom_free(d);
    return text;
}

Test(render_release, a_large_page_renders_the_same_text_when_its_tree_text_goes_back, .timeout = 120)
{
    for (size_t len = 300u << 10; len <= (3u << 20); len *= 3) {
        char *page = mixed_page(len);
        for (int mode = 0; mode < 4; mode++) {
            bool whole = mode & 1, markdown = mode & 2;
            size_t n1 = 0, n2 = 0;
            char *kept = render_page(page, len, whole, markdown, false, &n1);
            char *given = render_page(page, len, whole, markdown, true, &n2);
            cr_assert_gt(n1, len / 4, "len %zu mode %d: %zu bytes of text", len, mode, n1);
            cr_assert_eq(n1, n2, "len %zu mode %d: %zu vs %zu bytes", len, mode, n1, n2);
            cr_assert(memcmp(kept, given, n1) == 0, "len %zu mode %d: texts differ", len, mode);
            cr_assert(!whole || strstr(given, "late 50"), "len %zu mode %d: a caption after its rows", len, mode);
            free(kept);
            free(given);
        }
        free(page);
    }
}
/* What the render of an 8 MiB page of paragraphs adds to the process at
 * its peak, in KiB, and the text's size. */
static long render_growth_kib(bool give_back, size_t *out_len)
{
    enum { LEN = 8u << 20 };
    char *page = malloc(LEN + 1);
    cr_assert_not_null(page);
    size_t pos = (size_t)snprintf(page, LEN, "<html><body>\n");
    for (unsigned n = 0; pos + 100 < LEN; n++)
        pos += (size_t)snprintf(page + pos, LEN - pos, "<p>Paragraph %u: the river by the stone holds a lantern.</p>\n", n);
    vf_html_input in = { .data = page, .len = pos };
    vf_dom *d = vf_html_parse_streamed(&in);
    free(page);
    cr_assert_not_null(d);
    vf_node *body = body_of(d);
    vf_render_opts ro = { .max_out = LEN, .text_reached = give_back ? reached : NULL, .text_ctx = d };
    proc_reset_peak();
    long before = proc_status_kib("VmRSS");
    char *text = vf_render(&body, 1, &ro, out_len);
    long growth = proc_status_kib("VmHWM") - before;
    cr_assert_not_null(text);
    free(text);
    vf_dom_free(d);
    return growth;
}

/* The text rendered from the tree replaces the tree's text: the render's
 * peak stays well under the size of what it writes. Kept whole, the
 * tree's text and the rendered text were both there at the end. */
Test(render_release, rendering_a_large_page_gives_its_tree_text_back, .timeout = 60)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("AddressSanitizer's shadow memory is no render's real peak");
#endif
    size_t kept_len = 0, given_len = 0;
    long kept = render_growth_kib(false, &kept_len);
    long given = render_growth_kib(true, &given_len);
    cr_log_info("render of 8 MiB: +%ld KiB with the tree's text kept, +%ld KiB given back, text %zu KiB", kept,
                given, given_len >> 10);
    cr_assert_eq(kept_len, given_len);
    cr_assert_lt(given, (long)(given_len >> 10) / 3, "render grew by %ld KiB for %zu KiB of text", given,
                 given_len >> 10);
}

static void write_none(char *dst, const void *ctx)
{
    (void)dst, (void)ctx;
}

/* A mapped tree (as for a page of page_len bytes) of n paragraphs, each
 * one text run of RUN bytes of one letter ('a' + i % 26). */
#define RUN (100u << 10)
static vf_dom *mapped_tree_of_runs(size_t page_len, vf_node **texts, int n)
{
    vf_dom *d = vf_dom_new(256u << 20);
    cr_assert_not_null(d);
    vf_dom_map(d, page_len);
    vf_dom_builder b;
    cr_assert(vf_build_init(&b, d));
    vf_dom_status st;
    cr_assert_not_null(vf_build_open(&b, "body", 0, write_none, NULL, false, &st));
    static char run[RUN];
    for (int i = 0; i < n; i++) {
        memset(run, 'a' + i % 26, sizeof run);
        cr_assert_not_null(vf_build_open(&b, "p", 0, write_none, NULL, false, &st));
        cr_assert_eq(vf_build_text(&b, VF_NODE_TEXT, run, sizeof run), VF_DOM_OK);
        texts[i] = vf_build_top_last(&b);
        vf_build_close(&b);
    }
    vf_build_done(&b);
    return d;
}

/* Text nodes in several chunks: reaching one gives back the chunks before
 * it and no other; given-back text is never reported held again. */
Test(render_release, reaching_text_gives_back_only_the_chunks_before_it)
{
    enum { N = 40 };
    vf_node *texts[N];
    vf_dom *d = mapped_tree_of_runs(256u << 10, texts, N);
    cr_assert(vf_dom_text_reached(d, vf_node_text(texts[0])));
    cr_assert(vf_dom_text_reached(d, vf_node_text(texts[20])));
    for (int i = 0; i < 18; i++)
        cr_assert_not(vf_dom_text_reached(d, vf_node_text(texts[i])), "text %d was given back", i);
    for (int i = 20; i < N; i++) {
        const char *t = vf_node_text(texts[i]);
        cr_assert_eq(texts[i]->aux, RUN);
        cr_assert(t[0] == 'a' + i % 26 && t[RUN - 1] == 'a' + i % 26 && t[RUN] == '\0');
    }
    cr_assert(vf_dom_text_reached(d, vf_node_text(texts[N - 1])));
    vf_dom_free(d);
}

/* A tree on the heap (a small page) gives nothing back: every text stays. */
Test(render_release, a_heap_tree_keeps_its_text)
{
    vf_dom *d = vf_dom_new(64u << 20);
    vf_dom_builder b;
    cr_assert(vf_build_init(&b, d));
    vf_dom_status st;
    cr_assert_not_null(vf_build_open(&b, "body", 0, write_none, NULL, false, &st));
    static char run[100u << 10];
    vf_node *texts[8];
    for (int i = 0; i < 8; i++) {
        memset(run, 'a' + i, sizeof run);
        cr_assert_not_null(vf_build_open(&b, "p", 0, write_none, NULL, false, &st));
        cr_assert_eq(vf_build_text(&b, VF_NODE_TEXT, run, sizeof run), VF_DOM_OK);
        texts[i] = vf_build_top_last(&b);
        vf_build_close(&b);
    }
    vf_build_done(&b);
    cr_assert(vf_dom_text_reached(d, vf_node_text(texts[7])));
    for (int i = 0; i < 8; i++)
        cr_assert(vf_dom_text_reached(d, vf_node_text(texts[i])) && vf_node_text(texts[i])[5] == 'a' + i);
    vf_dom_free(d);
}

/* A page of VF_PAGE_MAP_HUGE_MIN or more: chunks are whole huge pages. The
 * built tree gives back its newest chunk's unused pages (vf_dom_trim)
 * without cutting its text, and reaching text still gives back exactly the
 * chunks before it. */
Test(render_release, a_huge_chunk_tree_trims_its_head_and_gives_back_passed_chunks)
{
    enum { N = 50 };
    vf_node *texts[N];
    vf_dom *d = mapped_tree_of_runs(8u << 20, texts, N);
    /* 20 runs of 100 KiB to a 2 MiB chunk: three text chunks, the last a
     * quarter full. */
    size_t before = vf_dom_bytes(d);
    vf_dom_trim(d);
    size_t after = vf_dom_bytes(d);
    cr_assert_lt(after, before, "nothing was trimmed (%zu bytes)", before);
    cr_assert_geq(before - after, (1u << 20), "only %zu bytes trimmed", before - after);
    cr_assert(vf_dom_text_reached(d, vf_node_text(texts[40])));
    for (int i = 0; i < 40; i++)
        cr_assert_not(vf_dom_text_reached(d, vf_node_text(texts[i])), "text %d was not given back", i);
    for (int i = 40; i < N; i++) {
        const char *t = vf_node_text(texts[i]);
        cr_assert(t[0] == 'a' + i % 26 && t[RUN - 1] == 'a' + i % 26 && t[RUN] == '\0', "text %d was cut", i);
    }
    vf_dom_free(d);
}
