/* The worker pool as it is now, for GET /v1/health and /v1/ready: the spawn
 * path the next worker takes, the supervised zygote, the slots and their
 * queue, and the confinement the last worker really had against
 * worker.require. Cheap; any thread. */
#ifndef VERIFETCH_POOL_STATUS_H
#define VERIFETCH_POOL_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "broker/broker_context.h"

typedef struct {
    const char *spawn;            /* "zygote" or "exec": the path the next worker takes */
    bool zygote_enabled;          /* a zygote was started and is supervised */
    bool zygote_up;               /* it serves now */
    int zygote_pid;               /* 0 when none */
    unsigned zygote_restarts;     /* since start-up */
    unsigned zygote_rotations;    /* replaced by a fresh one for age or worker count (fresh layout) */
    unsigned zygote_draining;     /* replaced ones still finishing their workers */
    char zygote_reason[200];      /* its greeting when up, why it is down otherwise */
    unsigned slots_total;         /* worker.max_concurrent (after any resize) */
    unsigned slots_in_use;
    unsigned waiters;             /* lookups queued for a slot (FIFO) */
    bool last_known;              /* a worker has answered since start-up (probe included) */
    bool last_from_zygote;
    uint32_t last_layers;         /* VF_LAYER_* applied to the last worker that answered */
    char last_layer_names[160];   /* "rlimits,uid,userns,..." */
    uint32_t required_layers;     /* worker.require */
    uint32_t missing;             /* required_layers & ~last_layers (0 when !last_known) */
    bool ready;                   /* slots_total > 0, missing == 0 and a spawn path usable */
    char not_ready[200];          /* why !ready */
} vf_pool_status;

void vf_pool_status_get(const vf_broker *b, vf_pool_status *out);

#endif
