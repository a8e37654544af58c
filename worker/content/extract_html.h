/* HTML page -> the text the model reads: parse (html_dom), read metadata
 * (html_meta), prune what a reader never sees (prune), pick the main
 * content (main_content) unless the page is asked for or nothing convinces,
 * render Markdown or text (render). */
#ifndef VERIFETCH_WORKER_EXTRACT_HTML_H
#define VERIFETCH_WORKER_EXTRACT_HTML_H

#include <stdbool.h>
#include <stddef.h>

#include "ipc/ipc_page_meta.h"
#include "worker/content/html_dom.h"
#include "worker/content/render.h"

typedef struct {
    bool markdown;
    bool whole_page;        /* skip the main-content pick */
    vf_links_style links;
    const char *page_url;   /* links resolve against it (and <base href>); may be NULL */
    size_t max_out;
    /* Called once the input is no longer read (may be NULL): the caller
     * frees it there, before the tree is built. */
    void (*input_done)(void *ctx);
    void *input_ctx;
    /* libxml2 pulls utf8 in as it parses (no copy of the whole page), and
     * input_consumed(input_ctx, upto) (may be NULL) hears which prefix is
     * never read again (html_dom.h, vf_html_input). */
    bool input_streamed;
    void (*input_consumed)(void *ctx, size_t upto);
    /* Non-NULL: a page of VF_PAGE_MAP_HUGE_MIN bytes or more gets its text in
     * a mapping whose length is stored here (0: malloc'd as usual); give it
     * back with vf_tbuf_unmap_taken. */
    size_t *out_map_len;
} vf_html_opts;

/* utf8 must be valid UTF-8 without NUL (vf_to_utf8 output). Returns malloc'd
 * (or, see out_map_len, mapped) NUL-terminated text of at most o->max_out bytes, or NULL when out of
 * memory. meta (may be NULL) gets title, lang, ..., extract, page_chars,
 * main_chars and password_field; charset is the caller's. */
char *vf_html_extract(const char *utf8, size_t len, const vf_html_opts *o, vf_page_meta *meta,
                      size_t *out_len);

/* The whole pruned page as plain text, links as text. */
char *vf_html_to_text(const char *utf8, size_t len, size_t max_out, size_t *out_len);

#endif
