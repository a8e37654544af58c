/* Small read-only helpers over the page's tree (dom_tree.h) shared by the pruner, the
 * scorer, the metadata reader and the renderer. */
#ifndef VERIFETCH_WORKER_DOM_UTIL_H
#define VERIFETCH_WORKER_DOM_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "worker/content/dom_tree.h"

#include "worker/content/tag_class.h"

/* The attribute's value without copying (NULL when absent; "" when empty). */
const char *vf_dom_attr(const vf_node *el, const char *name);

/* Case-insensitive ASCII equality. */
bool vf_dom_attr_is(const vf_node *el, const char *name, const char *want);

static inline vf_tag_info vf_dom_tag(const vf_node *el)
{
    return vf_tag_at(el->name_id);
}

/* The text of n and everything under it, concatenated (malloc'd, "" when
 * none; NULL when out of memory), as libxml2's xmlNodeGetContent gave it. */
char *vf_dom_text_content(const vf_node *n);

/* Next node in document order after n, staying inside root; skips n's
 * children when skip_children. */
vf_node *vf_dom_next(vf_node *n, const vf_node *root, bool skip_children);

/* Code points of text under n with whitespace runs counted once. */
size_t vf_dom_text_len(const vf_node *n);

/* Lowercase ASCII copy of class + " " + id into buf (cut at len). */
void vf_dom_class_id(const vf_node *el, char *buf, size_t len);

/* Does s (class/id soup) contain one of words as a substring? */
bool vf_dom_hint_any(const char *soup, const char *const *words);

#endif
