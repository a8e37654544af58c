/* The lookup cache in front of the provider loop: per tenant, keyed by the
 * normalised URL and the request's output options (broker/fleet/cache_key.h),
 * holding only successful, already redacted ToolResults, for at most the
 * tenant's cache.max_ttl_s and what the origin's Cache-Control allows
 * (no-store, no-cache and private are never stored). Two tiers: this
 * process's LRU, then the shared store. Identical concurrent lookups are
 * collapsed into one fetch: within a process by waiting on the first, across
 * the fleet by a short lock in the shared store that the others poll.
 * The receipt gets cache ("hit" | "miss" | "bypass") and fetched_at. */
#ifndef VERIFETCH_FLEET_LOOKUP_H
#define VERIFETCH_FLEET_LOOKUP_H

#include <jansson.h>

#include "broker/api/request.h"
#include "broker/broker_context.h"

/* The uncached lookup. *cache_control receives the winning response's
 * Cache-Control (malloc'd) or NULL. */
typedef json_t *(*vf_lookup_fn)(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req,
                                char **cache_control);

/* run directly when the tenant has no cache; otherwise through the cache. */
json_t *vf_fleet_lookup(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req,
                        vf_lookup_fn run);

/* On the server thread, before a lookup's own thread is started: with a
 * shared store, its plan and admission trip (the tenant quota, the cache
 * claim, the circuit reads) built and the script written, so the round trip
 * travels while the thread is born. NULL = nothing ahead (no store, nothing
 * counted fleet-wide, or this pod's own share of the tenant already full). The
 * result goes to vf_fleet_lookup_prepare on the lookup's thread, or to
 * vf_fleet_lookup_drop when that thread never runs. */
typedef struct vf_fleet_ahead vf_fleet_ahead;
vf_fleet_ahead *vf_fleet_lookup_ahead(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req);
void vf_fleet_lookup_drop(const vf_broker *b, vf_fleet_ahead *ahead);

/* On the lookup's thread, before the tenant's quota is taken (with
 * vf_fleet_writes_begin/send around both): with a shared store, the quota's
 * round trip then also claims the cache and reads the circuits, so a cache
 * miss waits for one round trip before it fetches. With ahead (which it
 * takes), that trip is already on its way: the quota waits for its verdict,
 * and nothing of the lookup runs before. */
void vf_fleet_lookup_prepare(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req,
                             vf_fleet_ahead *ahead);

/* A hit ready in this process's cache: the lookup's prepared one (found
 * before its quota trip); else (no thread, no trip needed) any without a
 * shared store, or with one when this pod's slice of the tenant's fleet
 * quota can admit it (the quota's acquire on this thread then takes no trip).
 * The ToolResult as stored, already marked cache "hit" (malloc'd, *len
 * bytes), or NULL = run the lookup. The caller admits it under the tenant's
 * quota at once, on the same thread, and counts it with vf_fleet_count_hit. */
char *vf_fleet_ready_hit(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req, size_t *len);
void vf_fleet_count_hit(const vf_broker *b, const vf_tenant_config *t, int64_t started_ms);

/* Receipt fields for a result: cache and fetched_at (RFC 3339 UTC, ms). */
void vf_fleet_mark_receipt(json_t *result, const char *cache, uint64_t fetched_at_ms);

/* Wall-clock ms. */
uint64_t vf_fleet_wall_ms(void);

#endif
