/* The lookup cache's shared-store tier: values and the fleet-wide fetch
 * lock in Redis. "The value, or else the lock" runs inside the lookup's one
 * admission trip (fleet_admission.c); "store the value and drop the lock" is
 * a SET and a DEL, deferred writes nobody waits for. A store that is down
 * answers like an empty one that grants every lock: the pod fetches. */
#ifndef VERIFETCH_FLEET_CACHE_STORE_H
#define VERIFETCH_FLEET_CACHE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/fleet/state_store.h"

/* Lua: vf_claim(value, lock, lock_ms) returns {1, value} | {2} (lock taken)
 * | {0} (another holds it). Also run inside the lookup's one-trip admission. */
#define VF_CACHE_CLAIM_LUA \
    "local function vf_claim(kv, kl, px)\n" \
    "  local v = redis.call('GET', kv)\n" \
    "  if v then return {1, v} end\n" \
    "  if redis.call('SET', kl, '1', 'NX', 'PX', px) then return {2} end\n" \
    "  return {0}\n" \
    "end\n"

typedef enum {
    VF_CLAIM_HIT,      /* *json holds a value fresh enough for the caller */
    VF_CLAIM_LOCKED,   /* no usable value; this pod holds the fetch lock (or the store is down) */
    VF_CLAIM_BUSY,     /* no usable value; another pod holds the lock */
} vf_cache_claim;

/* What vf_claim's {tag, value} means for this caller (value may be NULL): a
 * value no older than max_age_ms and not past its expiry at now (HIT), or the
 * fetch lock (a stale value costs a second trip to take it). */
vf_cache_claim vf_cache_store_claimed(vf_state *st, long long tag, const redisReply *value, const char *lock_key,
                                      uint64_t now, uint64_t max_age_ms, uint64_t lock_ms, char **json,
                                      uint64_t *fetched_at, uint64_t *expires_at);

/* The value alone (NULL when absent, stale or the store is down). */
char *vf_cache_store_get(vf_state *st, const char *key, uint64_t now, uint64_t max_age_ms, uint64_t *fetched_at,
                         uint64_t *expires_at);

/* Stores json for ttl_s and, when lock_key is not NULL, drops the lock. */
void vf_cache_store_put(vf_state *st, const char *key, const char *lock_key, const char *json, size_t len,
                        uint64_t fetched_at, unsigned ttl_s);

void vf_cache_store_unlock(vf_state *st, const char *lock_key);
bool vf_cache_store_locked(vf_state *st, const char *lock_key);

#endif
