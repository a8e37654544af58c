/* Private to broker/fleet: the fleet object shared by fleet.c (setup, quotas,
 * readiness) and fleet_lookup.c (cache and single-flight). */
#ifndef VERIFETCH_FLEET_INTERNAL_H
#define VERIFETCH_FLEET_INTERNAL_H

#include <pthread.h>

#include "broker/api/metrics.h"
#include "broker/fleet/fleet.h"
#include "broker/fleet/fleet_keys.h"
#include "broker/fleet/lookup_lru.h"
#include "broker/fleet/shared_quota.h"
#include "broker/fleet/state_store.h"

/* One lookup being fetched in this process; identical ones wait for it. */
typedef struct vf_flight {
    char key[VF_FLEET_KEY_MAX];
    pthread_cond_t done;
    bool finished;
    unsigned waiters;
    struct vf_flight *next;
} vf_flight;

struct vf_fleet {
    vf_state *st;                 /* NULL = no shared store */
    vf_shared_quota *tenant_q, *key_q;
    vf_circuit_shared circuit_ops;
    vf_quota *key_quota;          /* providers[].quota, named by key id (local; shared hook when st) */
    vf_lru *lru;
    vf_metrics *metrics;
    pthread_mutex_t flights_lock;
    vf_flight *flights;
};

/* fleet_lookup.c, for the tenant quota's shared hook: when this thread's
 * lookup was prepared for tenant name, its quota trip also carries the cache
 * claim and circuit reads (true, *decided as the hook's return); false = not
 * prepared, use the plain quota script. */
bool vf_fleet_plan_quota(vf_fleet *f, const char *name, const vf_quota_limits *l, vf_quota_verdict *v,
                         unsigned *retry_after_s, int *decided);
/* fleet_lookup.c: true once when this thread's lookup was admitted for
 * tenant name without a lease (a hit found ahead): its release is a no-op. */
bool vf_fleet_plan_leaseless(const char *name);
/* fleet_lookup.c, for the tenant quota's hooks on the thread that answers a
 * hit admitted from this pod's slice (vf_fleet_ready_hit): acquire is true
 * once when this thread armed one for tenant name (admit it, no trip), and
 * release then true once (nothing to give back). */
bool vf_fleet_sliced_acquire(const char *name);
bool vf_fleet_sliced_release(const char *name);
/* fleet_lookup.c: the end of this thread's lookup (before its writes go):
 * gives back what the plan took and the lookup never used. */
void vf_fleet_plan_end(vf_fleet *f);

/* The running broker's fleet (set by vf_fleet_start), for readiness. */
vf_fleet *vf_fleet_current(void);

#endif
