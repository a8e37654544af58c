#ifndef VF_WORKER_CONTENT_PAGE_MAP_H
#define VF_WORKER_CONTENT_PAGE_MAP_H

#include <stddef.h>

/* Whole-page anonymous mappings for buffers that grow with mremap (no copy)
 * and give pages back with munmap: the body, the text buffer and a large
 * page's tree. From VF_PAGE_MAP_HUGE_MIN bytes a mapping is made of whole,
 * aligned 2 MiB units and asks for transparent huge pages (MADV_HUGEPAGE):
 * a fresh worker faults every page it touches in, and on a virtual machine
 * each 4 KiB fault is a trap costing ~10 µs, while one huge page clears
 * 2 MiB in ~0.1 ms. Where the kernel gives no huge pages the mapping works
 * the same with small ones. */

#define VF_PAGE_MAP_HUGE_MIN ((size_t)512 << 10)
#define VF_PAGE_MAP_HUGE ((size_t)2 << 20)

size_t vf_page_size(void);

/* n rounded up to whole pages; SIZE_MAX when that would overflow. */
size_t vf_page_round(size_t n);

/* The length a mapping asked for n bytes gets: whole pages, or from
 * VF_PAGE_MAP_HUGE_MIN whole huge units (but a tail under half a unit past
 * the first is left in small pages). SIZE_MAX when that would overflow. */
size_t vf_page_map_len(size_t n);

/* A fresh mapping of len bytes (old NULL) or old's mapping of old_len bytes
 * grown or shrunk to len, perhaps moved; len in whole pages, best rounded by
 * vf_page_map_len(). NULL on failure (old stays valid). */
void *vf_page_map_resize(void *old, size_t old_len, size_t len);

#endif
