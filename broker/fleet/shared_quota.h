/* Fleet-wide admission counters in the shared store, one Lua script per
 * admission so concurrent pods never race: a token bucket (requests per
 * minute, same arithmetic as broker/api/quota.c, on the store's clock) and a
 * set of in-flight leases (concurrency; a lease a crashed pod never released
 * expires after VF_SHARED_LEASE_MS). Used for tenants and provider keys. */
#ifndef VERIFETCH_FLEET_SHARED_QUOTA_H
#define VERIFETCH_FLEET_SHARED_QUOTA_H

#include "broker/api/quota.h"
#include "broker/fleet/state_store.h"

#define VF_SHARED_LEASE_MS (15u * 60u * 1000u)

typedef struct vf_shared_quota vf_shared_quota;

/* scope names the counter family ("tenant", "pkey"); it is hashed into keys. */
vf_shared_quota *vf_shared_quota_new(vf_state *st, const char *scope);
void vf_shared_quota_free(vf_shared_quota *sq);

/* 1: the store decided (*v, and *retry_after_s >= 1 when refused); on
 * VF_QUOTA_OK a lease is held until vf_shared_quota_release. 0: the store is
 * unavailable and nothing was taken (use local state). */
int vf_shared_quota_acquire(void *sq, const char *name, const vf_quota_limits *l, vf_quota_verdict *v,
                            unsigned *retry_after_s);
/* Gives back one lease taken for name by this process, if any. */
void vf_shared_quota_release(void *sq, const char *name);

#endif
