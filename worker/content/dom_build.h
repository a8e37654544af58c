/* Builds a vf_dom the way libxml2's SAX2 tree builder did from the same
 * HTML parser events, so the tree keeps libxml2's shape: an element opens
 * under the innermost open one; with none open it becomes the root, or,
 * once a root exists, a child of the root (a later DOCTYPE puts it beside
 * the root instead, out of every reader's reach); adjacent text of one
 * type under one parent is a single node; text with no open element is
 * dropped. */
#ifndef VERIFETCH_WORKER_DOM_BUILD_H
#define VERIFETCH_WORKER_DOM_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "worker/content/dom_tree.h"

/* Deeper than libxml2 (256) or html_dom.h (VF_HTML_MAX_DEPTH) ever opens. */
#define VF_DOM_MAX_OPEN 1100u

typedef struct {
    vf_node *el, *last; /* an open element and its last child */
} vf_open_el;

typedef struct {
    vf_dom *dom;
    vf_open_el *open; /* VF_DOM_MAX_OPEN entries */
    size_t depth;
    vf_node *root_last; /* the root's last child once the root is closed */
} vf_dom_builder;

/* false when out of memory. */
bool vf_build_init(vf_dom_builder *b, vf_dom *dom);
/* Frees the builder's stack, not the tree. */
void vf_build_done(vf_dom_builder *b);

/* Opens element name (lowercase) with an attr_store.h run of attr_bytes
 * bytes written by write_attrs(dst, ctx). NULL and *st set when the tree is
 * full, out of memory or too deep. beside_root: a DOCTYPE exists, so an
 * element opened with none open after the root goes beside it. */
vf_node *vf_build_open(vf_dom_builder *b, const char *name, size_t attr_bytes,
                       void (*write_attrs)(char *dst, const void *ctx), const void *ctx,
                       bool beside_root, vf_dom_status *st);

/* Closes the innermost open element, if any. */
void vf_build_close(vf_dom_builder *b);

/* The innermost open element and its last child (NULL when none). */
vf_node *vf_build_top(const vf_dom_builder *b);
vf_node *vf_build_top_last(const vf_dom_builder *b);

/* Adds text (VF_NODE_TEXT or VF_NODE_CDATA) under the innermost open
 * element, merged into its last child when that has the same type. */
vf_dom_status vf_build_text(vf_dom_builder *b, int type, const char *s, size_t n);

#endif
