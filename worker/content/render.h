/* A (pruned, picked) HTML tree -> Markdown or plain text. Markdown: #
 * headings, nested -/1. lists, blank lines between paragraphs, a hard break
 * for <br>, fenced code with its whitespace, > quotes, GFM pipe tables,
 * [text](absolute-url) links (inline, none or a numbered list), ![alt]
 * images. Text: the same structure without markup. Both put a space between
 * inline boxes a browser would separate, and drop invisible characters. */
#ifndef VERIFETCH_WORKER_RENDER_H
#define VERIFETCH_WORKER_RENDER_H

#include <stddef.h>

#include "worker/content/dom_tree.h"

#include "worker/content/render_opts.h"


/* Renders roots (in order) into malloc'd NUL-terminated UTF-8; NULL when out
 * of memory. Elements vf_main_skips() names are left out. */
char *vf_render(vf_node *const *roots, size_t n_roots, const vf_render_opts *o, size_t *out_len);

#endif
