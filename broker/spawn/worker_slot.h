/* Bounded concurrency for workers: a slot per live worker, handed to waiters
 * strictly first come, first served; resizable live (reload); a wait ends at
 * its deadline or when the lookup's cancellation fd fires. */
#ifndef VERIFETCH_WORKER_SLOT_H
#define VERIFETCH_WORKER_SLOT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct vf_slot_waiter;

typedef struct {
    pthread_mutex_t lock;
    unsigned total;                 /* slots allowed now */
    unsigned in_use;                /* may exceed total right after a shrink */
    unsigned waiters;
    struct vf_slot_waiter *head, *tail;   /* FIFO of waiting lookups */
} vf_worker_slots;

int vf_worker_slots_init(vf_worker_slots *s, unsigned total);
void vf_worker_slots_destroy(vf_worker_slots *s);

typedef enum {
    VF_SLOT_TAKEN = 0,
    VF_SLOT_TIMEOUT,     /* none free before deadline_ms */
    VF_SLOT_CANCELLED,   /* cancel_fd fired while waiting */
} vf_slot_rc;

/* cancel_fd: a lookup's vf_cancel_fd(), or -1. */
vf_slot_rc vf_worker_slot_take(vf_worker_slots *s, int64_t deadline_ms, int cancel_fd);
void vf_worker_slot_give(vf_worker_slots *s);

/* Reload: n slots from now on (n >= 1). Growing serves waiters at once;
 * shrinking kills nothing, slots above n retire as they are given back. */
int vf_worker_slots_resize(vf_worker_slots *s, unsigned n);

typedef struct {
    unsigned total, in_use, waiters;
} vf_worker_slots_snapshot;

void vf_worker_slots_read(vf_worker_slots *s, vf_worker_slots_snapshot *out);

#endif
