/* GET /v1/health (liveness) and GET /v1/ready (readiness), built from live
 * state: the worker pool as it is now (spawn path, zygote, slots and their
 * queue, the confinement the last worker really had), the admission queue,
 * the shared store, and the start-up confinement probe. */
#ifndef VERIFETCH_HEALTH_H
#define VERIFETCH_HEALTH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "broker/api/admission.h"
#include "broker/lookup/pool_status.h"

typedef struct {
    bool probed;             /* a probe worker answered at start */
    bool zygote;             /* the probe worker came from the zygote */
    uint32_t layers;         /* VF_LAYER_* the probe worker applied */
    char probe_detail[256];  /* why the probe failed, if it did */
    unsigned worker_uid;     /* the uid the probe worker ran as */
    bool uid_separated;      /* ... and it is not the broker's (only a root broker separates them) */
} vf_health;

typedef struct {
    const vf_health *startup;        /* the start-up probe */
    const vf_pool_status *pool;      /* now */
    const vf_admission_stats *queue; /* now */
    bool draining;                   /* SIGTERM received */
} vf_health_inputs;

/* Readiness: NULL when ready, else why not (static or in pool->not_ready). */
const char *vf_health_not_ready(const vf_health_inputs *in);

/* The document both endpoints answer with: "status" is "ok" when ready,
 * "degraded" when lookups still work on local state only (shared store
 * down), "not_ready" otherwise; "ready" and, when not, "not_ready" say why. */
json_t *vf_health_json(const vf_health_inputs *in);

#endif
