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

#endif
