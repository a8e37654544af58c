/* Settings for running several verifetchd instances as one fleet: the
 * optional shared store (Redis or Valkey), per-provider-key quotas and the
 * per-tenant lookup cache. Parsed by policy/config_fleet.c. */
#ifndef VERIFETCH_FLEET_CONFIG_H
#define VERIFETCH_FLEET_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define VF_STATE_PREFIX_MAX    64u
#define VF_STATE_DEFAULT_PREFIX "verifetch:"
#define VF_CACHE_MAX_TTL_S     86400u
#define VF_CACHE_MAX_ENTRIES   100000u
#define VF_CACHE_DEFAULT_ENTRIES 1024u

/* state = { redis = "unix:/run/redis.sock" | "redis://127.0.0.1:6379"; password_file; key_prefix; } */
typedef struct {
    char *redis;        /* as written; NULL = no shared state (in-process only) */
    char *unix_path;    /* parsed: the socket path, or NULL for TCP */
    char *host;         /* parsed: TCP host, or NULL for a unix socket */
    int port;
    char *password;     /* read from password_file at load (wiped on free); NULL = no AUTH */
    char *key_prefix;   /* default "verifetch:" */
} vf_state_config;

/* providers[].quota: shared by every tenant and pod using the same key. 0 = unlimited. */
typedef struct {
    unsigned requests_per_minute;
    unsigned concurrent;
} vf_provider_quota;

/* tenants[].cache: absent = no caching for this tenant (today's behaviour). */
typedef struct {
    bool enabled;
    unsigned max_ttl_s;       /* upper bound on any entry's lifetime (default 300) */
    unsigned max_entries;     /* in-process LRU size (default 1024) */
    char **private_hosts;     /* "example.com" (exact) or ".example.com" (any subdomain): never cached */
    size_t n_private_hosts;
} vf_cache_config;

void vf_state_config_free(vf_state_config *s);
void vf_cache_config_free(vf_cache_config *c);

/* true when host (already lower-case) is one the tenant marks private. */
bool vf_cache_host_private(const vf_cache_config *c, const char *host);

#endif
