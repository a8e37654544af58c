/* A broker-wide bound on page text held at once. A burst of large pages
 * (16 workers extracting side by side on two cores finish together) would
 * otherwise land in the broker at the same moment, each frame a full copy
 * of its page. A lookup asks for room before it reads a large result frame;
 * while the room is taken, its worker waits with the result in its own
 * memory (its write blocks), within the lookup's deadline. The room is held
 * until the lookup is done with the text (its answer is built). */
#ifndef VERIFETCH_TEXT_BUDGET_H
#define VERIFETCH_TEXT_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc_frame.h"

/* Page text held at once across all lookups. A lookup that holds nothing
 * yet may always take room while nobody holds any, so one page larger
 * than this still goes through. */
#define VF_TEXT_BUDGET_BYTES (32u << 20)
/* Frames below this pass without asking: they cannot make a burst. */
#define VF_TEXT_BUDGET_MIN_FRAME (1u << 20)

typedef struct {
    int64_t deadline_ms;  /* give up waiting then (vf_now_ms clock) */
    int cancel_fd;        /* readable once the lookup is cancelled; -1: none */
} vf_text_budget_wait;

/* A vf_ipc_gate (ctx: a vf_text_budget_wait). Takes payload_len bytes of
 * room for the calling thread, waiting while others hold it; a thread
 * that already holds room is never made to wait (no lookup waits on
 * itself). VF_IPC_ERR_TIMEOUT at the deadline or on cancellation. */
vf_ipc_err vf_text_budget_gate(size_t payload_len, void *ctx);

/* The calling thread is done with its page text: give back all its room. */
void vf_text_budget_release(void);

/* Room held by all threads now (tests, metrics). */
size_t vf_text_budget_held(void);

#endif
