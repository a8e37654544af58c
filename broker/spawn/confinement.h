/* What confinement workers actually get on this host, for GET /v1/health and
 * for the start-up check that makes a missing layer fatal. */
#ifndef VERIFETCH_BROKER_CONFINEMENT_H
#define VERIFETCH_BROKER_CONFINEMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "broker/spawn/worker_run.h"

typedef struct {
    bool ran;              /* a probe worker answered over the real spawn path */
    bool zygote;           /* that path was the zygote (fast spawn) */
    uint32_t layers;       /* VF_LAYER_* the probe worker applied */
    uint32_t missing;      /* spec->required_layers not among them */
    double spawn_ms;       /* the probe's spawn-to-answer time */
    char layer_names[160]; /* layers as "rlimits,uid,userns,..." */
    /* Issue 13 item 14: the "uid" layer only says "not root". Whether a
     * worker runs under another uid than the broker that holds the keys is
     * this: true for a broker started as root (workers drop to
     * VF_WORKER_NOBODY) and for a non-root one that maps a subordinate uid
     * (subuid_map.h); otherwise (systemd DynamicUser=, the k8s sidecar
     * without uidmap) workers have the broker's uid, kept apart by the other
     * layers alone. */
    unsigned worker_uid;   /* the uid workers run as (outside any user namespace) */
    bool uid_separated;    /* worker_uid differs from the broker's uid */
    char detail[256];      /* what went wrong when !ran or missing != 0 */
} vf_confinement_report;

/* Runs one worker (spec->path, no test hook) against a canned HTTP answer on a
 * socketpair and records how it was confined. Call once at start, after
 * vf_zygote_start() when a zygote is used, and keep the report. */
void vf_confinement_probe(const vf_worker_spec *spec, vf_confinement_report *out);

/* The same with the real job limits (the largest max_body_bytes and
 * timeout_ms of any tenant), so the probe meets the memory limit a lookup
 * will. */
void vf_confinement_probe_limits(const vf_worker_spec *spec, uint64_t max_body, uint32_t timeout_ms,
                                 vf_confinement_report *out);

/* RLIMIT_AS: true when the hard limit this process inherited is below what a
 * worker wants for max_body (vf_worker_as_bytes); workers are then clamped to
 * it, and *hard and *wanted say by how much. */
bool vf_worker_as_clamped(uint64_t max_body, uint64_t *hard, uint64_t *wanted);

/* A config name to layer bits: every vf_layer_name() plus "namespaces" (user,
 * pid, net, ipc and mount) and "all". False for an unknown name. */
bool vf_layers_parse(const char *name, uint32_t *bits);

#endif
