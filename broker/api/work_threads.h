/* Threads for deferred work (a lookup, an MCP tool call), kept for the next
 * piece of work instead of one started and ended per request: a thread's
 * start and end cost the broker ~30 us of CPU per lookup (clone, the new
 * stack's page faults, its madvise at exit) and a scheduler round trip.
 *
 * A thread that finishes waits up to VF_WORK_IDLE_MS for more work; at most
 * VF_WORK_IDLE_MAX wait at once (the rest end at once). How many are busy is
 * bounded by whoever hands out the work (the server's admission), as before.
 * Process-wide: a thread holds nothing of the work it ran once it returns. */
#ifndef VERIFETCH_WORK_THREADS_H
#define VERIFETCH_WORK_THREADS_H

#include <stddef.h>

#define VF_WORK_STACK (512 * 1024)
#define VF_WORK_IDLE_MAX 16
#define VF_WORK_IDLE_MS 10000
#define VF_WORK_THREAD_NAME "vf-work"

typedef void (*vf_work_fn)(void *arg);

/* Runs fn(arg) on an idle thread, or on a new one. 0, or -1 when no thread
 * could be started (fn was not called and will not be). */
int vf_work_threads_run(vf_work_fn fn, void *arg);

typedef struct {
    unsigned long started;   /* threads started since the process began */
    unsigned live;           /* running or waiting */
    unsigned idle;           /* waiting for work */
} vf_work_threads_stats;

void vf_work_threads_counts(vf_work_threads_stats *out);

/* Tests: the idle limits (0 = the defaults above). */
void vf_work_threads_tune(unsigned idle_max, unsigned idle_ms);

#endif
