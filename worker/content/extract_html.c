#include "worker/content/extract_html.h"

#include <stdlib.h>
#include <string.h>

#include "worker/content/dom_util.h"
#include "worker/content/entities.h"
#include "worker/content/html_meta.h"
#include "worker/content/main_content.h"
#include "worker/content/page_map.h"
#include "worker/content/prune.h"
#include "worker/content/tag_class.h"
#include "worker/content/text_buf.h"

static vf_node *find_body(vf_dom *doc)
{
    vf_node *root = vf_dom_root(doc);
    if (!root)
        return NULL;
    for (vf_node *c = vf_node_first(root); c; c = c->next)
        if (c->type == VF_NODE_ELEMENT && vf_dom_tag(c).id == VF_T_BODY)
            return c;
    return root;
}

static bool password_in(const vf_prune_report *rep, const vf_main_pick *pick, bool whole)
{
    for (size_t i = 0; i < rep->n_password; i++)
        if (whole || vf_main_contains(pick, rep->password_anchor[i]))
            return true;
    return false;
}

static void free_rewritten(void *ctx)
{
    char **p = ctx;
    free(*p);
    *p = NULL;
}

/* A large page's text goes back as the render passes it (html_dom.c maps it). */
static bool text_reached(void *ctx, const char *text)
{
    return vf_dom_text_reached(ctx, text);
}

char *vf_html_extract(const char *utf8, size_t len, const vf_html_opts *o, vf_page_meta *meta,
                      size_t *out_len)
{
    *out_len = 0;
    bool oom = false;
    size_t rewritten_len = 0;
    char *rewritten = vf_html5_entities_rewrite(utf8, len, &rewritten_len, &oom);
    if (oom)
        return NULL;
    vf_dom *doc;
    if (rewritten) {
        if (o->input_done)
            o->input_done(o->input_ctx);
        doc = vf_html_parse(rewritten, rewritten_len, free_rewritten, &rewritten);
    } else if (o->input_streamed) {
        vf_html_input in = { .data = utf8, .len = len, .consumed = o->input_consumed, .done = o->input_done,
                             .ctx = o->input_ctx };
        doc = vf_html_parse_streamed(&in);
    } else {
        doc = vf_html_parse(utf8, len, o->input_done, o->input_ctx);
    }
    if (!doc)
        return NULL;
    char *base = vf_html_base_url(doc, o->page_url);
    if (meta && !vf_html_meta_read(doc, base, meta)) {
        free(base);
        vf_dom_free(doc);
        return NULL;
    }
    vf_node *root = vf_dom_root(doc);
    vf_prune_report rep = { 0 };
    if (root)
        vf_prune(root, &rep);
    vf_node *body = find_body(doc);

    vf_main_pick pick = { 0 };
    bool main = false;
    if (body && !o->whole_page)
        main = vf_main_pick_content(body, &pick);
    vf_main_pick_settle(body, &pick);
    if (o->out_map_len)
        *o->out_map_len = 0;
    vf_render_opts ro = { .markdown = o->markdown, .links = o->links, .base_url = base,
                          .max_out = o->max_out, .text_reached = text_reached, .text_ctx = doc,
                          .out_map_len = len >= VF_PAGE_MAP_HUGE_MIN ? o->out_map_len : NULL };
    /* Counted before the render, which may give the tree's text back. */
    size_t page_chars = !meta ? 0 : main ? pick.page_chars : vf_main_text_chars(body);
    char *text = NULL;
    if (main) {
        text = vf_render(pick.parts, pick.n_parts, &ro, out_len);
    } else if (body) {
        text = vf_render(&body, 1, &ro, out_len);
    } else {
        text = calloc(1, 1);
    }
    if (meta && text) {
        meta->extract = strdup(main ? "main" : "page");
        /* Both sizes count the tree's text the same way, markup aside. */
        meta->page_chars = page_chars;
        meta->main_chars = main ? pick.main_chars : meta->page_chars;
        meta->password_field = password_in(&rep, &pick, !main);
        if (!meta->extract) {
            vf_tbuf_unmap_taken(text, o->out_map_len ? *o->out_map_len : 0);
            text = NULL;
        }
    }
    vf_main_pick_free(body, &pick);
    free(base);
    vf_dom_free(doc);
    return text;
}

char *vf_html_to_text(const char *utf8, size_t len, size_t max_out, size_t *out_len)
{
    vf_html_opts o = { .markdown = false, .whole_page = true, .links = VF_LINKS_NONE,
                       .max_out = max_out };
    return vf_html_extract(utf8, len, &o, NULL, out_len);
}
