/* Attributes of the parsed tree, kept compactly: libxml2 spent an xmlAttr,
 * a text node and two allocations on every attribute (about 250 bytes
 * before the value); here an element's kept attributes are one run of
 * "name\0value\0...\0" written right after its node (dom_tree.h). */
#ifndef VERIFETCH_WORKER_ATTR_STORE_H
#define VERIFETCH_WORKER_ATTR_STORE_H

#include <stddef.h>

/* Bytes the run of the NULL-terminated name/value pairs takes (a NULL value
 * is stored as ""); 0 when there is nothing to keep. */
size_t vf_attr_run_size(const char *const *pairs);

/* Writes that run to dst (vf_attr_run_size bytes). */
void vf_attr_run_write(char *dst, const char *const *pairs);

/* The value of name (ASCII case-insensitive) in a run, NULL when absent. */
const char *vf_attr_find(const char *run, const char *name);

#endif
