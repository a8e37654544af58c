#ifndef VF_WORKER_CONTENT_PAGE_MAP_H
#define VF_WORKER_CONTENT_PAGE_MAP_H

#include <stddef.h>

/* Whole-page anonymous mappings for buffers that grow with mremap (no copy)
 * and give pages back with munmap: the text buffer and a large page's tree. */

size_t vf_page_size(void);

/* n rounded up to whole pages; SIZE_MAX when that would overflow. */
size_t vf_page_round(size_t n);

/* A fresh mapping of len bytes (old NULL) or old's mapping of old_len bytes
 * grown or shrunk to len, perhaps moved. NULL on failure (old stays valid). */
void *vf_page_map_resize(void *old, size_t old_len, size_t len);

#endif
