/* The broker's heap after load: glibc keeps what a burst of large lookups
 * made it grow to (one arena per busy thread, and a mmap threshold that
 * rises to the largest buffer ever freed), so an idle broker would hold on
 * to a peak's worth of pages. These calls keep it near its starting size. */
#ifndef VERIFETCH_MEMORY_TUNE_H
#define VERIFETCH_MEMORY_TUNE_H

#include <stdbool.h>
#include <stddef.h>

/* How long the broker must have answered nothing before its heap trim. */
#define VF_MEMORY_QUIET_BEFORE_TRIM_MS 1000

/* Once, before any thread starts: one arena, buffers of an 8 MiB page mapped
 * for themselves (and so unmapped on free), smaller ones reused from the heap. */
void vf_memory_tune_startup(void);

/* Its thresholds alone (a 1 MiB page's buffers reused from the heap, an
 * 8 MiB page's mapped for themselves), without the one-arena limit, which
 * trades CPU under contention for a smaller idle heap. */
void vf_memory_reuse_page_buffers(void);

/* A response of this many bytes was built; large ones mark the heap for a trim. */
void vf_memory_note_response(size_t bytes);

/* A request has been answered (any thread). */
void vf_memory_request_done(void);

/* Called about every 100 ms from one thread, saying whether any request is
 * being answered: once none has been for VF_MEMORY_QUIET_BEFORE_TRIM_MS,
 * hand free heap pages back (all but a few MiB at the top) if a large
 * response was built since the last trim. Not sooner, so a caller asking
 * page after page keeps its pages. */
void vf_memory_tick(bool none_in_flight);

#endif
