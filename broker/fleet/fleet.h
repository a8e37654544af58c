/* Fleet mode: shared quotas, circuits and lookup cache for several verifetchd
 * instances, over an optional Redis/Valkey (config `state`). Without `state`
 * everything stays in-process, as before; the lookup cache then works per pod.
 * A store failure never fails a lookup: each operation falls back to local
 * state, is counted (verifetch_state_backend_errors_total) and readiness
 * reports "degraded" until a reconnect (with backoff) succeeds. */
#ifndef VERIFETCH_FLEET_H
#define VERIFETCH_FLEET_H

#include <jansson.h>
#include <stdbool.h>

#include "broker/api/metrics.h"
#include "broker/api/quota.h"
#include "policy/circuit.h"
#include "policy/config.h"

typedef struct vf_fleet vf_fleet;

/* Once, at the first configure: connects nothing yet (lazy), installs the
 * shared hooks into the tenant quota and circuit registries. NULL with err. */
vf_fleet *vf_fleet_new(vf_quota *tenant_quota, vf_circuit_registry *circuits, vf_metrics *metrics,
                       const vf_config *cfg, char *err, size_t errlen);
/* Every configure (start and reload): registers provider-key quotas. */
int vf_fleet_configure(vf_fleet *f, const vf_config *cfg, char *err, size_t errlen);
void vf_fleet_free(vf_fleet *f);

/* providers[].quota for one attempt: true = go (call vf_fleet_provider_release
 * after it); false = skip this provider now, *retry_after_s >= 1. */
bool vf_fleet_provider_acquire(vf_fleet *f, const vf_tenant_config *t, const vf_provider_config *p,
                               unsigned *retry_after_s);
void vf_fleet_provider_release(vf_fleet *f, const vf_tenant_config *t, const vf_provider_config *p);

/* Around one lookup's thread: the store writes nobody waits for (lease
 * releases, circuit records, cache stores) are queued from begin, sent in
 * one write by send (call it before the answer goes out, so they reach the
 * store first), and their replies read by settle (after the answer). */
void vf_fleet_writes_begin(const vf_fleet *f);
void vf_fleet_writes_send(vf_fleet *f);
void vf_fleet_writes_settle(const vf_fleet *f);

/* Round trips the lookups waited for on the shared store (0 without one). */
uint64_t vf_fleet_round_trips(const vf_fleet *f);

/* For readiness: true when a shared store is configured and unavailable. */
bool vf_fleet_degraded(void);
/* "local" (no store), "ok" or "degraded". */
const char *vf_fleet_state_name(void);

#endif
