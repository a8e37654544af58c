#include "broker/memory_tune.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ipc/ipc_frame.h"

/* A response this large (a page of text and its copies) is worth a trim. */
#define LARGE_RESPONSE (256u * 1024u)

/* Below this a buffer comes from the heap and is reused by the next lookup;
 * above it (8 MiB pages) it is mapped for itself and unmapped on free. */
#define HEAP_BUFFER_MAX (4u << 20)

/* What an idle trim leaves at the top of the heap: about one 1 MiB page's
 * buffers, so a caller asking one page after another does not fault them in
 * again after every answer. */
#define KEEP_AFTER_TRIM (4u << 20)

/* Why the trim waits for a quiet spell (VF_MEMORY_QUIET_BEFORE_TRIM_MS):
 * glibc's malloc_trim also hands back the pages of every free chunk inside
 * the heap, not only its top, so trimming after each answer made a caller
 * asking one 1 MiB page after another fault ~230 pages in again every time. */

static atomic_bool trim_due;
static _Atomic int64_t last_done_ms;

void vf_memory_reuse_page_buffers(void)
{
    /* A fixed threshold stops glibc raising it to the largest block ever
     * freed (up to 32 MiB), so an 8 MiB page's buffers stay mapped for
     * themselves and the peak is what is live. Buffers of a 1 MiB page come
     * from the heap and are reused: fresh mapped pages cost a fault each on
     * every copy (~11 us a page on a paravirtualised guest), which was two
     * thirds of the broker's CPU per 1 MiB lookup there. */
    mallopt(M_MMAP_THRESHOLD, HEAP_BUFFER_MAX);
    /* free() would otherwise hand the heap's top back after every large
     * lookup; the idle trim below does it once the burst is over. */
    mallopt(M_TRIM_THRESHOLD, 8 * HEAP_BUFFER_MAX);
}

void vf_memory_tune_startup(void)
{
    /* One arena: glibc's malloc_trim gives back the top of the main heap
     * only, so free memory at the top of a thread arena would stay with the
     * broker for good once large buffers come from the heap. Small
     * allocations go through each thread's cache and seldom take its lock. */
    mallopt(M_ARENA_MAX, 1);
    vf_memory_reuse_page_buffers();
}

void vf_memory_note_response(size_t bytes)
{
    if (bytes >= LARGE_RESPONSE)
        atomic_store(&trim_due, true);
}

void vf_memory_request_done(void)
{
    atomic_store_explicit(&last_done_ms, vf_now_ms(), memory_order_relaxed);
}

void vf_memory_tick(bool none_in_flight)
{
    if (!none_in_flight || !atomic_load(&trim_due))
        return;
    if (vf_now_ms() - atomic_load_explicit(&last_done_ms, memory_order_relaxed) < VF_MEMORY_QUIET_BEFORE_TRIM_MS)
        return;
    if (atomic_exchange(&trim_due, false))
        malloc_trim(KEEP_AFTER_TRIM);
}
