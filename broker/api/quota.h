/* Per-tenant admission quotas: lookups in flight at once and requests per
 * minute (a token bucket: `burst` requests at once, refilled continuously at
 * requests_per_minute). Thread-safe; time is passed in (monotonic ms).
 * A refusal says which limit tripped and how long to wait (Retry-After). */
#ifndef VERIFETCH_QUOTA_H
#define VERIFETCH_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

#define VF_QUOTA_MAX_TENANTS 256u
#define VF_QUOTA_MAX_RPM     1000000u
#define VF_QUOTA_NAME_MAX    64u

typedef struct {
    unsigned max_concurrent;       /* lookups in flight; 0 = unlimited */
    unsigned requests_per_minute;  /* 0 = unlimited; <= VF_QUOTA_MAX_RPM */
    unsigned burst;                /* bucket size; 0 = requests_per_minute; <= VF_QUOTA_MAX_RPM */
    /* max_concurrent is a share of this broker's worker slots (the default
     * fair share), not a tenant limit: a fleet store never counts it. */
    bool concurrent_per_pod;
} vf_quota_limits;

typedef enum {
    VF_QUOTA_OK = 0,
    VF_QUOTA_CONCURRENCY,          /* too many lookups in flight */
    VF_QUOTA_RATE,                 /* requests per minute used up */
    VF_QUOTA_UNKNOWN_TENANT,       /* never configured: refused (a broker bug, not a client error) */
} vf_quota_verdict;

typedef struct vf_quota vf_quota;

vf_quota *vf_quota_new(void);
void vf_quota_free(vf_quota *q);

/* Add a tenant or, on config reload, change its limits. In-flight counts are
 * kept; the bucket keeps its tokens (capped to the new size). A new tenant
 * starts with a full bucket. 0, or -1 on a bad name, limit or the tenant cap. */
int vf_quota_configure(vf_quota *q, const char *tenant, const vf_quota_limits *limits, uint64_t now_ms);

/* Admit one lookup: on VF_QUOTA_OK the caller owns a concurrency slot and must
 * call vf_quota_release. Otherwise nothing is taken and *retry_after_s (when
 * not NULL) is >= 1: for rate, the seconds until a token is back (rounded up);
 * for concurrency, 1 (slots free when lookups end, which cannot be predicted).
 * Concurrency is checked first, so a refused lookup never spends a token. */
vf_quota_verdict vf_quota_acquire(vf_quota *q, const char *tenant, uint64_t now_ms, unsigned *retry_after_s);

/* The same without waiting, for a thread that must not block (the server's):
 * with a fleet store, vf_quota_acquire may wait for the store's verdict on
 * other lookups holding this pod's share (one trip at most); this refuses
 * for concurrency instead. */
vf_quota_verdict vf_quota_try_acquire(vf_quota *q, const char *tenant, uint64_t now_ms, unsigned *retry_after_s);

/* End of an admitted lookup. Unknown tenants and extra releases are ignored. */
void vf_quota_release(vf_quota *q, const char *tenant);

/* Lookups in flight for tenant (0 when unknown). */
unsigned vf_quota_in_flight(vf_quota *q, const char *tenant);

/* Optional fleet-wide counters (broker/fleet/shared_quota.h). acquire returns
 * 1 when it decided, 0 when the shared store is unavailable: the local bucket
 * then decides, so a store outage never refuses a lookup by itself. */
typedef struct {
    int (*acquire)(void *ctx, const char *name, const vf_quota_limits *l, vf_quota_verdict *v,
                   unsigned *retry_after_s);
    void (*release)(void *ctx, const char *name);
    void *ctx;
} vf_quota_shared;

/* Set once at startup, before lookups run (NULL = local only). */
void vf_quota_set_shared(vf_quota *q, const vf_quota_shared *shared);

/* "ok", "concurrency", "rate", "unknown_tenant" */
const char *vf_quota_verdict_name(vf_quota_verdict v);

#endif
