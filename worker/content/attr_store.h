/* Attributes of the parsed tree, kept compactly beside it. libxml2 spends an
 * xmlAttr, a text node and two allocations on every attribute (about 250
 * bytes before the value); here an element's kept attributes are one run of
 * "name\0value\0...\0" in an arena that lives as long as the document. */
#ifndef VERIFETCH_WORKER_ATTR_STORE_H
#define VERIFETCH_WORKER_ATTR_STORE_H

#include <stdbool.h>

#include <libxml/tree.h>

typedef struct vf_attr_arena vf_attr_arena;

/* Copies the NULL-terminated name/value pairs (a NULL value is stored as "")
 * into *arena (created on first use). Returns the run, NULL when there is
 * nothing to keep or memory ran out (*oom says which). */
const char *vf_attr_store(vf_attr_arena **arena, const xmlChar *const *pairs, bool *oom);

/* The value of name (ASCII case-insensitive) in a run, NULL when absent. */
const char *vf_attr_find(const char *run, const char *name);

void vf_attr_arena_free(vf_attr_arena *arena);

#endif
