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

#include "broker/fleet/fleet_keys.h"
#include "broker/fleet/state_store.h"
#include "policy/circuit.h"

#define VF_CIRCUIT_PEEK_MAX 4u   /* providers one lookup's admission reads ahead */

/* Lua: vf_peek(open_key, tripped_key) returns 0 closed, -1 half-open, or the
 * ms until an open circuit may probe. */
#define VF_CIRCUIT_PEEK_LUA \
    "local function vf_peek(ko, kt)\n" \
    "  local ttl = redis.call('PTTL', ko)\n" \
    "  if ttl > 0 or ttl == -1 then return math.max(ttl, 1) end\n" \
    "  if redis.call('EXISTS', kt) == 1 then return -1 end\n" \
    "  return 0\n" \
    "end\n"

/* The keys vf_peek reads for (tenant, provider[, normalised host]): open and
 * tripped per scope, provider-wide first. Returns the scope count (1 or 2). */
int vf_shared_circuit_peek_keys(vf_state *st, const char *tenant, const char *provider, const char *host,
                                char keys[4][VF_FLEET_KEY_MAX]);
/* This thread's lookup read state[scope] (vf_peek's answers): admit answers
 * from it while it is closed or open. tenant and provider must outlive the
 * lookup (config strings). Cleared by vf_shared_circuit_peek_clear. */
void vf_shared_circuit_peek_put(const char *tenant, const char *provider, const char *host, const long long *state);
void vf_shared_circuit_peek_clear(void);

/* Fills ops with callbacks bound to st (which must outlive the registry's use). */
void vf_shared_circuit_ops(vf_state *st, vf_circuit_shared *ops);

#endif
