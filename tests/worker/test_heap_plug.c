/* After vf_heap_plug_holes (worker/sandbox/heap_plug.c) every allocation
 * comes from the top of the heap, none from a hole the past left. A plain
 * program, not a Criterion test: the check needs a process with glibc's main
 * arena only, as the zygote has (Criterion runs threads of its own, and
 * mallinfo2 then reports another arena's top). Exit 0 when it holds. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "worker/sandbox/heap_plug.h"

#define N_BLOCKS 4000
#define N_AFTER 300

/* Where the main arena's top chunk starts: it runs up to the break. */
static uintptr_t top_start(void)
{
    return (uintptr_t)sbrk(0) - mallinfo2().keepcost;
}

/* Of N_AFTER allocations of assorted sizes, how many came from below the
 * top; -1 when out of memory. They are freed again (tcache, bins). */
static int allocations_from_holes(void)
{
    static void *p[N_AFTER];
    uintptr_t top = top_start();
    int below = 0;
    for (size_t i = 0; i < N_AFTER; i++) {
        p[i] = malloc(i * 53 % 2500 + 8);
        if (!p[i])
            return -1;
        below += (uintptr_t)p[i] < top;
    }
    for (size_t i = 0; i < N_AFTER; i++)
        free(p[i]);
    return below;
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__)
    puts("skipped: ASan's allocator is not glibc's");
    return 77;
#endif
    static void *blocks[N_BLOCKS];
    for (size_t i = 0; i < N_BLOCKS; i++)
        if (!(blocks[i] = malloc(i * 37 % 3000 + 8))) /* tcache, small and large bin sizes */
            return 1;
    for (size_t i = 0; i < N_BLOCKS; i += 2)
        free(blocks[i]); /* every other: holes that cannot merge */
    /* Without plugging, such allocations land in the holes: what the test
     * looks at is there to see. */
    int before = allocations_from_holes();
    if (before < N_AFTER / 2) {
        printf("FAIL: only %d of %d allocations came from holes before plugging\n", before, N_AFTER);
        return 1;
    }
    size_t held = vf_heap_plug_holes();
    int after = allocations_from_holes();
    printf("before: %d of %d allocations from holes; %zu bytes held; after: %d\n", before, N_AFTER, held, after);
    if (after != 0) {
        puts("FAIL: allocations still come from holes");
        return 1;
    }
    for (size_t i = 1; i < N_BLOCKS; i += 2)
        free(blocks[i]);
    return 0;
}
