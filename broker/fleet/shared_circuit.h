/* Fleet-wide circuit breakers in the shared store, plugged into
 * policy/circuit.c through vf_circuit_shared. Per (tenant, provider) and
 * (tenant, provider, host) it keeps: a consecutive-failure counter fed by every
 * pod, an "open" key that expires after the cooldown, a "tripped" marker that
 * outlives it (half-open), and a probe lease taken with SET NX semantics inside
 * a script, so exactly one pod probes. The shared breaker uses the
 * consecutive-failure rule (failure_threshold, or min_samples when that rule
 * is off); the rate rule and latency stay per pod. */
#ifndef VERIFETCH_FLEET_SHARED_CIRCUIT_H
#define VERIFETCH_FLEET_SHARED_CIRCUIT_H

#include "broker/fleet/state_store.h"
#include "policy/circuit.h"

/* Fills ops with callbacks bound to st (which must outlive the registry's use). */
void vf_shared_circuit_ops(vf_state *st, vf_circuit_shared *ops);

#endif
