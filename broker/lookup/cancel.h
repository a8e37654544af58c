/* A lookup's cancellation token.
 *
 * The API side fires it when the client hangs up (or the daemon drains); the
 * lookup side polls its fd beside the worker's and kills the worker, frees
 * the slot and closes the origin connection as soon as it becomes readable.
 * An eventfd rather than a flag alone, so that a thread blocked in poll() wakes. */
#ifndef VERIFETCH_CANCEL_H
#define VERIFETCH_CANCEL_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct vf_cancel {
    atomic_bool fired;
    int fd;   /* eventfd: readable once fired; never read from, so it stays readable */
} vf_cancel;

/* 0, or -1 with errno (EMFILE...): callers then run without cancellation. */
int vf_cancel_init(vf_cancel *c);

/* Idempotent and safe from any thread. */
void vf_cancel_fire(vf_cancel *c);

/* NULL-safe: a lookup without a token is never cancelled. */
bool vf_cancel_fired(const vf_cancel *c);

/* For poll(): -1 for a NULL token. */
int vf_cancel_fd(const vf_cancel *c);

void vf_cancel_destroy(vf_cancel *c);

#endif
