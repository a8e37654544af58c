/* The lookup cache's shared-store tier: values and the fleet-wide fetch
 * lock in Redis. The common paths cost one round trip each: "the value, or
 * else the lock" before a fetch, and "store the value and drop the lock"
 * after it (Lua, so the pair is atomic and one trip). A store that is down
 * answers like an empty one that grants every lock: the pod fetches. */
#ifndef VERIFETCH_FLEET_CACHE_STORE_H
#define VERIFETCH_FLEET_CACHE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/fleet/state_store.h"

typedef enum {
    VF_CLAIM_HIT,      /* *json holds a value fresh enough for the caller */
    VF_CLAIM_LOCKED,   /* no usable value; this pod holds the fetch lock (or the store is down) */
    VF_CLAIM_BUSY,     /* no usable value; another pod holds the lock */
} vf_cache_claim;

/* A value no older than max_age_ms and not past its expiry at now, or the
 * fetch lock for lock_ms. */
vf_cache_claim vf_cache_store_claim(vf_state *st, const char *key, const char *lock_key, uint64_t now,
                                    uint64_t max_age_ms, uint64_t lock_ms, char **json, uint64_t *fetched_at,
                                    uint64_t *expires_at);

/* The value alone (NULL when absent, stale or the store is down). */
char *vf_cache_store_get(vf_state *st, const char *key, uint64_t now, uint64_t max_age_ms, uint64_t *fetched_at,
                         uint64_t *expires_at);

/* Stores json for ttl_s and, when lock_key is not NULL, drops the lock. */
void vf_cache_store_put(vf_state *st, const char *key, const char *lock_key, const char *json, size_t len,
                        uint64_t fetched_at, unsigned ttl_s);

void vf_cache_store_unlock(vf_state *st, const char *lock_key);
bool vf_cache_store_locked(vf_state *st, const char *lock_key);

#endif
