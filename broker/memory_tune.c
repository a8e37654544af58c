#include "broker/memory_tune.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>

/* A response this large (a page of text and its copies) is worth a trim. */
#define LARGE_RESPONSE (256u * 1024u)

static atomic_bool trim_due;

void vf_memory_tune_startup(void)
{
    /* Lookups run one thread per connection; without a cap glibc gives up to
     * 8 arenas per CPU, each keeping its own free pages. */
    mallopt(M_ARENA_MAX, 4);
    /* A fixed threshold stops glibc raising it to the largest block ever
     * freed (up to 32 MiB): page-sized buffers then come from mmap and go
     * back to the kernel on free, so the peak is what is live, not what the
     * arenas fragmented into. The price is faulting fresh pages on every
     * copy: 1 MiB malloc+memcpy took 3.5-4.7 ms CPU fresh vs 3.1-3.2 ms
     * reused, on a loaded machine (a scratch measurement, see README). */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
}

void vf_memory_note_response(size_t bytes)
{
    if (bytes >= LARGE_RESPONSE)
        atomic_store(&trim_due, true);
}

void vf_memory_idle(void)
{
    if (atomic_exchange(&trim_due, false))
        malloc_trim(0);
}
