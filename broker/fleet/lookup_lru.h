/* The in-process tier of the lookup cache: per tenant, least recently used
 * entries evicted first, bounded by entry count (the tenant's
 * cache.max_entries) and by bytes. Values are the serialised, already
 * redacted ToolResult. Times are wall-clock ms (shared with other pods). */
#ifndef VERIFETCH_FLEET_LOOKUP_LRU_H
#define VERIFETCH_FLEET_LOOKUP_LRU_H

#include <stddef.h>
#include <stdint.h>

#define VF_LRU_MAX_VALUE        (2u * 1024u * 1024u)     /* larger results are not cached */
#define VF_LRU_MAX_TENANT_BYTES (64u * 1024u * 1024u)

typedef struct vf_lru vf_lru;

vf_lru *vf_lru_new(void);
void vf_lru_free(vf_lru *c);

/* malloc'd copy of a fresh value (now < expiry and now - fetched_at <= max_age_ms),
 * or NULL. Expired entries found on the way are dropped. */
char *vf_lru_get(vf_lru *c, const char *tenant, const char *key, uint64_t now_ms, uint64_t max_age_ms,
                 uint64_t *fetched_at_ms);

/* Insert or replace. Values over VF_LRU_MAX_VALUE are ignored. */
void vf_lru_put(vf_lru *c, const char *tenant, unsigned max_entries, const char *key, const char *value,
                size_t value_len, uint64_t fetched_at_ms, uint64_t expires_at_ms);

/* Entries held for tenant (tests). */
size_t vf_lru_count(vf_lru *c, const char *tenant);

#endif
