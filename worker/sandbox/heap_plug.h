/* The zygote's heap made hole-free before it forks. A forked worker shares
 * that heap copy-on-write, so every heap page it writes costs a page fault.
 * A malloc that is served from a free chunk left by the zygote's set-up
 * writes that chunk's header and its bin neighbours' links, wherever they
 * lie; one that misses its tcache bin also moves up to seven more chunks of
 * its size into it, writing each. Holding every such chunk in the zygote
 * leaves a worker only the top of the heap to allocate from: its memory
 * packs onto fewer, consecutive pages. */
#ifndef VERIFETCH_WORKER_HEAP_PLUG_H
#define VERIFETCH_WORKER_HEAP_PLUG_H

#include <stddef.h>

/* Allocates (and keeps, for the process's life) every free chunk below the
 * heap's top; returns the bytes now held. Once, after the last set-up
 * allocation and before the first fork. */
size_t vf_heap_plug_holes(void);

#endif
