#include "worker/sandbox/heap_plug.h"

#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

/* A bound on the loop, far above the few thousand chunks a set-up leaves. */
#define MAX_PLUGS 200000u
#define SMALLEST_REQUEST 8u   /* a 32-byte chunk, glibc's least */
#define LAST_SMALL_REQUEST 1032u /* tcache's largest: a 1040-byte chunk */
#define SMALL_STEP 16u        /* one tcache/small bin per 16 bytes */

typedef struct plug {
    struct plug *next;
} plug;

static plug *held; /* never freed: the holes stay filled */

/* Where the top chunk starts: it runs up to the program break (glibc's main
 * arena, the only one a single-threaded process has), keepcost long. */
static uintptr_t top_start(void)
{
    struct mallinfo2 m = mallinfo2();
    return (uintptr_t)sbrk(0) - m.keepcost;
}

/* Takes chunks of request bytes until one comes from the top. Taking a
 * hole leaves the top where it is, so it is located once (mallinfo2 walks
 * every bin). */
static size_t plug_size(size_t request, unsigned *budget)
{
    size_t got = 0;
    uintptr_t top = top_start();
    while (*budget > 0) {
        plug *p = malloc(request);
        if (!p)
            break;
        bool from_top = (uintptr_t)p >= top;
        if (from_top && request > LAST_SMALL_REQUEST) {
            free(p); /* merges back into the top */
            break;
        }
        /* A tcache-sized chunk from the top is kept too: freed, it would sit
         * in its tcache bin below the new top, a hole again. */
        p->next = held;
        held = p;
        got += request;
        (*budget)--;
        if (from_top)
            break;
    }
    return got;
}

size_t vf_heap_plug_holes(void)
{
    unsigned budget = MAX_PLUGS;
    size_t got = 0;
    /* Large holes first, in big bites; then every small size, which also
     * empties each tcache bin and takes what splitting left. */
    for (size_t r = 64u << 10; r > LAST_SMALL_REQUEST; r >>= 1)
        got += plug_size(r, &budget);
    for (size_t r = LAST_SMALL_REQUEST + SMALL_STEP; r > SMALLEST_REQUEST;) {
        r -= SMALL_STEP;
        got += plug_size(r, &budget);
    }
    return got;
}
