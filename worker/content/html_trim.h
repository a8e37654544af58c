/* What the HTML parser leaves out of the tree because nothing downstream
 * (metadata, pruner, scorer, renderer) ever reads it: attributes no reader
 * asks for, the bodies of scripts (JSON-LD aside) and style sheets, and
 * whitespace-only text at a block boundary, which a browser collapses away.
 * The tree of a dense page is several times the page; these are a large
 * share of its nodes. */
#ifndef VERIFETCH_WORKER_HTML_TRIM_H
#define VERIFETCH_WORKER_HTML_TRIM_H

#include <stdbool.h>
#include <stddef.h>

#include <libxml/xmlstring.h>

#include "worker/content/dom_tree.h"

/* Copies the (name, value) pairs of attrs worth keeping into kept (room for
 * cap pointers, NULL-terminated like attrs). attrs may be NULL. */
void vf_trim_attrs(const xmlChar **attrs, const xmlChar **kept, size_t cap);

/* Elements whose whitespace is content (pre, textarea, ...). */
bool vf_trim_keeps_blanks(const xmlChar *name);

/* True when ch[0..len) is whitespace only and, added under parent (whose
 * last child is last, NULL for none), would start a block or follow one:
 * the text a browser drops. */
bool vf_trim_blank_text(const vf_node *parent, const vf_node *last, const xmlChar *ch, int len);

/* True for raw text nobody reads: the body of a style sheet or of a script
 * other than application/ld+json (the metadata reads that one). */
bool vf_trim_raw_text(const vf_node *parent);

#endif
