/* Page UTF-8 -> libxml2 HTML tree, with the same bounds the SAX extractor
 * had: nesting past VF_HTML_MAX_DEPTH and parse-error work past
 * VF_HTML_ERROR_BUDGET stop the parser (the tree built so far is kept). */
#ifndef VERIFETCH_WORKER_HTML_DOM_H
#define VERIFETCH_WORKER_HTML_DOM_H

#include <stddef.h>

#include <libxml/HTMLtree.h>

#define VF_HTML_MAX_DEPTH 1024
#define VF_HTML_ERROR_BUDGET 50000000ull

/* utf8 must be valid UTF-8 without NUL. input_done(ctx), when not NULL, is
 * called exactly once, as soon as utf8 is no longer read (before the tree is
 * built). NULL only when out of memory. */
htmlDocPtr vf_html_parse(const char *utf8, size_t len, void (*input_done)(void *), void *ctx);

/* Frees a document vf_html_parse built (its attributes live beside it). */
void vf_html_free(htmlDocPtr doc);

#endif
