/* Small read-only helpers over libxml2's HTML tree shared by the pruner, the
 * scorer, the metadata reader and the renderer. */
#ifndef VERIFETCH_WORKER_DOM_UTIL_H
#define VERIFETCH_WORKER_DOM_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include <libxml/tree.h>

#include "worker/content/tag_class.h"

/* The attribute's value without copying (NULL when absent; "" when empty). */
const char *vf_dom_attr(const xmlNode *el, const char *name);

/* Case-insensitive ASCII equality. */
bool vf_dom_attr_is(const xmlNode *el, const char *name, const char *want);

static inline vf_tag_info vf_dom_tag(const xmlNode *el)
{
    return vf_tag_lookup((const char *)el->name);
}

/* Next node in document order after n, staying inside root; skips n's
 * children when skip_children. */
xmlNode *vf_dom_next(xmlNode *n, const xmlNode *root, bool skip_children);

/* Code points of text under n with whitespace runs counted once. */
size_t vf_dom_text_len(const xmlNode *n);

/* Lowercase ASCII copy of class + " " + id into buf (cut at len). */
void vf_dom_class_id(const xmlNode *el, char *buf, size_t len);

/* Does s (class/id soup) contain one of words as a substring? */
bool vf_dom_hint_any(const char *soup, const char *const *words);

#endif
