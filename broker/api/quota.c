#include "broker/api/quota.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tokens are kept in units of 1/60000 token so refill is exact integer math:
 * at R requests per minute the bucket gains R units per millisecond. */
#define UNITS_PER_TOKEN 60000ull

typedef struct {
    char name[VF_QUOTA_NAME_MAX + 1];
    vf_quota_limits limits;
    unsigned in_flight;
    unsigned undecided;     /* of in_flight: per-pod slots held while the store decides */
    uint64_t units;         /* current tokens, in units */
    uint64_t refilled_at;   /* ms of the last refill */
} tenant_quota;

struct vf_quota {
    pthread_mutex_t lock;
    pthread_cond_t decided;    /* an undecided per-pod slot was kept or given back */
    tenant_quota *tenants;
    size_t n, cap;
    vf_quota_shared shared;    /* fleet-wide counters; acquire NULL = none */
};

void vf_quota_set_shared(vf_quota *q, const vf_quota_shared *shared)
{
    if (q)
        q->shared = shared ? *shared : (vf_quota_shared){ 0 };
}


const char *vf_quota_verdict_name(vf_quota_verdict v)
{
    switch (v) {
    case VF_QUOTA_OK: return "ok";
    case VF_QUOTA_CONCURRENCY: return "concurrency";
    case VF_QUOTA_RATE: return "rate";
    case VF_QUOTA_UNKNOWN_TENANT: return "unknown_tenant";
    }
    return "unknown";
}

vf_quota *vf_quota_new(void)
{
    vf_quota *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    if (pthread_mutex_init(&q->lock, NULL) != 0) {
        free(q);
        return NULL;
    }
    if (pthread_cond_init(&q->decided, NULL) != 0) {
        pthread_mutex_destroy(&q->lock);
        free(q);
        return NULL;
    }
    return q;
}

void vf_quota_free(vf_quota *q)
{
    if (!q)
        return;
    free(q->tenants);
    pthread_cond_destroy(&q->decided);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

static tenant_quota *find(vf_quota *q, const char *name)
{
    for (size_t i = 0; i < q->n; i++)
        if (strcmp(q->tenants[i].name, name) == 0)
            return &q->tenants[i];
    return NULL;
}

static void undo_in_flight(vf_quota *q, const char *name)
{
    pthread_mutex_lock(&q->lock);
    tenant_quota *t = find(q, name);
    if (t && t->in_flight > 0)
        t->in_flight--;
    pthread_mutex_unlock(&q->lock);
}

/* A per-pod slot held while the store decided is now kept (admitted) or
 * given back; either way a lookup waiting behind it may look again. */
static void settle_reservation(vf_quota *q, const char *name, bool keep)
{
    pthread_mutex_lock(&q->lock);
    tenant_quota *t = find(q, name);
    if (t && t->undecided > 0)
        t->undecided--;
    if (t && !keep && t->in_flight > 0)
        t->in_flight--;
    pthread_cond_broadcast(&q->decided);
    pthread_mutex_unlock(&q->lock);
}

/* Its per-pod share is full, but not all of it is decided yet. */
static bool share_undecided(const tenant_quota *t)
{
    return t->limits.concurrent_per_pod && t->limits.max_concurrent && t->in_flight >= t->limits.max_concurrent &&
           t->undecided > 0;
}

/* The fleet decides when the store answers; 0 = decide locally. A per-pod
 * concurrency share is taken here first (a slot of this broker's), and only
 * the rest goes to the store. A full share held only by lookups the store
 * has not yet answered is waited for (may_wait), not refused: one the store
 * refuses gives its slot back, and a lookup it admitted must not be turned
 * away behind it (its token would go back and a burst could be refused
 * whole while the fleet still had tokens). The wait is one store trip at most. */
static int shared_acquire(vf_quota *q, const char *name, bool may_wait, vf_quota_verdict *v, unsigned *retry)
{
    pthread_mutex_lock(&q->lock);
    tenant_quota *t = find(q, name);
    while (may_wait && t && share_undecided(t)) {
        pthread_cond_wait(&q->decided, &q->lock);
        t = find(q, name);   /* a reload may have moved the table */
    }
    vf_quota_limits limits = t ? t->limits : (vf_quota_limits){ 0 };
    bool reserved = false;
    if (t && limits.concurrent_per_pod && limits.max_concurrent) {
        if (t->in_flight >= limits.max_concurrent) {
            pthread_mutex_unlock(&q->lock);
            *v = VF_QUOTA_CONCURRENCY;
            *retry = 1;
            return 1;
        }
        t->in_flight++;
        t->undecided++;
        reserved = true;
        limits.max_concurrent = 0;
    }
    pthread_mutex_unlock(&q->lock);
    int decided = t && q->shared.acquire(q->shared.ctx, name, &limits, v, retry) == 1;
    if (reserved)   /* refused, or the local path decides afresh: the slot goes back */
        settle_reservation(q, name, decided && *v == VF_QUOTA_OK);
    if (decided && *v == VF_QUOTA_OK && !reserved) {
        pthread_mutex_lock(&q->lock);
        if ((t = find(q, name)))
            t->in_flight++;
        pthread_mutex_unlock(&q->lock);
    }
    return decided;
}

static uint64_t capacity_units(const vf_quota_limits *l)
{
    unsigned burst = l->burst ? l->burst : l->requests_per_minute;
    return (uint64_t)burst * UNITS_PER_TOKEN;
}

static void refill(tenant_quota *t, uint64_t now)
{
    uint64_t cap = capacity_units(&t->limits);
    if (now > t->refilled_at && t->limits.requests_per_minute > 0) {
        uint64_t dt = now - t->refilled_at;
        uint64_t rate = t->limits.requests_per_minute;
        /* dt beyond what fills the bucket is capped first, so dt * rate cannot overflow. */
        uint64_t fill_ms = cap / rate + 1;
        uint64_t gained = (dt >= fill_ms ? fill_ms : dt) * rate;
        t->units = cap - t->units <= gained ? cap : t->units + gained;
    }
    /* A clock that steps back just restarts the refill from here. */
    t->refilled_at = now;
    if (t->units > cap)
        t->units = cap;
}

static bool name_ok(const char *name)
{
    return name && name[0] && strlen(name) <= VF_QUOTA_NAME_MAX;
}

int vf_quota_configure(vf_quota *q, const char *tenant, const vf_quota_limits *limits, uint64_t now_ms)
{
    if (!q || !limits || !name_ok(tenant) || limits->requests_per_minute > VF_QUOTA_MAX_RPM ||
        limits->burst > VF_QUOTA_MAX_RPM)
        return -1;
    int rc = 0;
    pthread_mutex_lock(&q->lock);
    tenant_quota *t = find(q, tenant);
    if (t) {
        refill(t, now_ms);
        bool was_unlimited = t->limits.requests_per_minute == 0;
        t->limits = *limits;
        if (was_unlimited)
            t->units = capacity_units(limits);   /* turning a rate on starts with a full bucket */
        refill(t, now_ms);   /* caps tokens to the new bucket size */
    } else if (q->n >= VF_QUOTA_MAX_TENANTS) {
        rc = -1;
    } else {
        if (q->n == q->cap) {
            size_t next = q->cap ? q->cap * 2 : 8;
            tenant_quota *grown = realloc(q->tenants, next * sizeof *grown);
            if (!grown) {
                pthread_mutex_unlock(&q->lock);
                return -1;
            }
            q->tenants = grown;
            q->cap = next;
        }
        t = &q->tenants[q->n++];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "%s", tenant);
        t->limits = *limits;
        t->units = capacity_units(limits);
        t->refilled_at = now_ms;
    }
    pthread_mutex_unlock(&q->lock);
    return rc;
}

static vf_quota_verdict acquire(vf_quota *q, const char *tenant, uint64_t now_ms, bool may_wait,
                                unsigned *retry_after_s)
{
    unsigned retry = 1;
    vf_quota_verdict v = VF_QUOTA_OK;
    if (!q || !name_ok(tenant)) {
        v = VF_QUOTA_UNKNOWN_TENANT;
        goto out;
    }
    if (q->shared.acquire && shared_acquire(q, tenant, may_wait, &v, &retry))
        goto out;
    v = VF_QUOTA_OK;   /* whatever an undecided hook left there, the local bucket decides */
    retry = 1;
    pthread_mutex_lock(&q->lock);
    tenant_quota *t = find(q, tenant);
    if (!t) {
        v = VF_QUOTA_UNKNOWN_TENANT;
    } else if (t->limits.max_concurrent && t->in_flight >= t->limits.max_concurrent) {
        v = VF_QUOTA_CONCURRENCY;
    } else if (t->limits.requests_per_minute) {
        refill(t, now_ms);
        if (t->units >= UNITS_PER_TOKEN) {
            t->units -= UNITS_PER_TOKEN;
        } else {
            v = VF_QUOTA_RATE;
            uint64_t rate = t->limits.requests_per_minute;
            uint64_t wait_ms = (UNITS_PER_TOKEN - t->units + rate - 1) / rate;
            uint64_t wait_s = (wait_ms + 999) / 1000;
            retry = wait_s < 1 ? 1 : (unsigned)wait_s;
        }
    }
    if (v == VF_QUOTA_OK)
        t->in_flight++;
    pthread_mutex_unlock(&q->lock);
out:
    if (retry_after_s)
        *retry_after_s = v == VF_QUOTA_OK ? 0 : retry;
    return v;
}

vf_quota_verdict vf_quota_acquire(vf_quota *q, const char *tenant, uint64_t now_ms, unsigned *retry_after_s)
{
    return acquire(q, tenant, now_ms, true, retry_after_s);
}

vf_quota_verdict vf_quota_try_acquire(vf_quota *q, const char *tenant, uint64_t now_ms, unsigned *retry_after_s)
{
    return acquire(q, tenant, now_ms, false, retry_after_s);
}

void vf_quota_release(vf_quota *q, const char *tenant)
{
    if (!q || !name_ok(tenant))
        return;
    undo_in_flight(q, tenant);
    if (q->shared.release)
        q->shared.release(q->shared.ctx, tenant);
}

unsigned vf_quota_in_flight(vf_quota *q, const char *tenant)
{
    if (!q || !name_ok(tenant))
        return 0;
    pthread_mutex_lock(&q->lock);
    tenant_quota *t = find(q, tenant);
    unsigned n = t ? t->in_flight : 0;
    pthread_mutex_unlock(&q->lock);
    return n;
}
