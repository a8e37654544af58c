/* Broker state that outlives any one policy snapshot: worker slots, quotas,
 * circuit health and metrics. Registries are keyed by tenant/provider name,
 * so a reload keeps the counts and circuits of names that survive it. */
#ifndef VERIFETCH_RUNTIME_H
#define VERIFETCH_RUNTIME_H

#include "broker/api/metrics.h"
#include "broker/api/quota.h"
#include "broker/spawn/worker_slot.h"
#include "policy/circuit.h"
#include "policy/config.h"

typedef struct {
    vf_worker_slots worker_slots;  /* live workers, all tenants; FIFO, resizable */
    vf_quota *quota;
    vf_circuit_registry *circuits;
    vf_metrics *metrics;
    struct vf_fleet *fleet;        /* shared store and lookup cache (broker/fleet/fleet.h) */
    struct vf_robots_cache *robots;/* robots.txt per origin (broker/lookup/robots.h) */
    struct vf_robots_flights *robots_flights; /* robots.txt fetches in flight (robots_flight.h) */
} vf_runtime;

int vf_runtime_init(vf_runtime *rt, unsigned max_workers);
/* Register a config's tenants and providers (call before the snapshot goes live). */
int vf_runtime_configure(vf_runtime *rt, const vf_config *cfg, char *err, size_t errlen);
void vf_runtime_destroy(vf_runtime *rt);

#endif
