/* Page UTF-8 -> the page's tree (dom_tree.h), built from libxml2's HTML
 * parser events, with the same bounds the SAX extractor had: nesting past
 * VF_HTML_MAX_DEPTH and parse-error work past VF_HTML_ERROR_BUDGET stop the
 * parser (the tree built so far is kept), and so does a tree past
 * VF_HTML_TREE_MULTIPLE times the page (plus VF_HTML_TREE_SLACK): a page
 * of nothing but "<p>" would otherwise cost ten times its size. */
#ifndef VERIFETCH_WORKER_HTML_DOM_H
#define VERIFETCH_WORKER_HTML_DOM_H

#include <stddef.h>

#include "worker/content/dom_tree.h"

#define VF_HTML_MAX_DEPTH 1024
#define VF_HTML_ERROR_BUDGET 50000000ull
#define VF_HTML_TREE_MULTIPLE 8u
#define VF_HTML_TREE_SLACK (1u << 20)

/* utf8 must be valid UTF-8 without NUL. input_done(ctx), when not NULL, is
 * called exactly once, as soon as utf8 is no longer read (before the tree is
 * built). NULL only when out of memory. */
vf_dom *vf_html_parse(const char *utf8, size_t len, void (*input_done)(void *), void *ctx);

/* A page libxml2 pulls in as it parses, the way it reads a file, instead
 * of copying it whole first. consumed(ctx, upto), when not NULL, is told as
 * the parse moves on that the bytes before upto are never read again (their
 * pages can go back to the kernel); done(ctx), when not NULL, is called
 * exactly once, when data is no longer read. */
typedef struct {
    const char *data;
    size_t len;
    void (*consumed)(void *ctx, size_t upto);
    void (*done)(void *ctx);
    void *ctx;
} vf_html_input;

/* vf_html_parse for such a page: the same tree. */
vf_dom *vf_html_parse_streamed(const vf_html_input *in);

#endif
