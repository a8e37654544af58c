/* The page's tree, compact: html_dom.c builds it from the events of
 * libxml2's HTML parser (which still decides implied and auto-closed tags),
 * and every reader walks it. libxml2's own tree spent a 120-byte xmlNode
 * and a malloc on every element and every text run; here a node is 32
 * bytes from a chunked arena, an element's kept attributes follow it in the
 * same arena, and text runs share one chunked byte arena. There is no prev
 * or last pointer: the builder keeps the last child of each open element. */
#ifndef VERIFETCH_WORKER_DOM_TREE_H
#define VERIFETCH_WORKER_DOM_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* libxml2's values, so a trace reads the same. */
enum { VF_NODE_ELEMENT = 1, VF_NODE_TEXT = 3, VF_NODE_CDATA = 4 };

enum {
    VF_NODE_HAS_ATTRS = 1u << 0, /* an attribute run follows the node */
    VF_NODE_SKIPPED = 1u << 1,   /* main_content settled: the renderer leaves it out */
};

typedef struct vf_node vf_node;
struct vf_node {
    vf_node *parent;
    vf_node *next;
    union {
        vf_node *first;   /* element: first child */
        const char *text; /* text, cdata: NUL-terminated, in the text arena */
    } u;
    uint8_t type;
    uint8_t flags;
    uint16_t name_id; /* element: tag_class index (1..) or a per-page id above them */
    uint32_t aux;     /* text: byte length; element: main_content's stats index + 1 */
};

static inline bool vf_node_is_element(const vf_node *n)
{
    return n->type == VF_NODE_ELEMENT;
}

/* First child of an element; NULL for text. */
static inline vf_node *vf_node_first(const vf_node *n)
{
    return n->type == VF_NODE_ELEMENT ? n->u.first : NULL;
}

/* Text of a text or cdata node; NULL for an element. */
static inline const char *vf_node_text(const vf_node *n)
{
    return n->type == VF_NODE_ELEMENT ? NULL : n->u.text;
}

static inline const unsigned char *vf_node_bytes(const vf_node *n)
{
    return (const unsigned char *)vf_node_text(n);
}

/* The element's kept attributes as attr_store.h's "name\0value\0...\0" run. */
static inline const char *vf_node_attrs(const vf_node *n)
{
    return (n->flags & VF_NODE_HAS_ATTRS) ? (const char *)(n + 1) : NULL;
}

typedef struct vf_dom vf_dom;

/* An empty tree that may grow to at most max_bytes of arena. NULL when out
 * of memory. */
vf_dom *vf_dom_new(size_t max_bytes);
void vf_dom_free(vf_dom *d);

/* The root element (the first the parser opened), NULL for none. */
vf_node *vf_dom_root(const vf_dom *d);
void vf_dom_set_root(vf_dom *d, vf_node *root);

typedef enum { VF_DOM_OK = 0, VF_DOM_FULL, VF_DOM_OOM } vf_dom_status;

/* A zeroed node followed by extra bytes (8-aligned), or NULL (*st says why). */
vf_node *vf_dom_alloc_node(vf_dom *d, size_t extra, vf_dom_status *st);

/* Gives text node t the text s[0..n), or appends it to t's text: in place
 * when t's bytes are the newest in the text arena and there is room. */
vf_dom_status vf_dom_set_text(vf_dom *d, vf_node *t, const char *s, size_t n);
vf_dom_status vf_dom_append_text(vf_dom *d, vf_node *t, const char *s, size_t n);

/* For a large page of page_len bytes, before anything is added (later: no
 * effect): the arenas are made of mappings of their own, which go back to
 * the kernel when freed (freed heap chunks stayed resident beside the
 * result) and, for text, as the renderer passes them (vf_dom_text_reached).
 * From VF_PAGE_MAP_HUGE_MIN the mappings are huge-page units (page_map.h). */
void vf_dom_map(vf_dom *d, size_t page_len);

/* The tree is built: a mapped tree gives back the pages its newest chunks
 * do not use (later additions still work, in fresh chunks). */
void vf_dom_trim(vf_dom *d);

/* A reader that reads text in tree order (the renderer) is at text, a
 * node's text: the text arena's chunks before the one holding
 * it are unmapped (vf_dom_map), so a large page's text need not outlive its rendering.
 * Text before it must never be read again. False when text is no longer
 * held (unmapped already): the reader must not read it. */
bool vf_dom_text_reached(vf_dom *d, const char *text);

/* Names of elements tag_class does not know, kept per page: the id, or 0
 * when the table is full or memory ran out (*st says which). */
uint16_t vf_dom_intern_name(vf_dom *d, const char *name, vf_dom_status *st);

/* The element's name (for a tag_class tag its table name). */
const char *vf_dom_name(const vf_dom *d, const vf_node *el);

/* Arena bytes in use (nodes, attributes, text). */
size_t vf_dom_bytes(const vf_dom *d);

#endif
