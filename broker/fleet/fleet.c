#include "broker/fleet/fleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/fleet/fleet_internal.h"
#include "broker/fleet/shared_circuit.h"
#include "ipc/ipc_frame.h"

static vf_fleet *current;

vf_fleet *vf_fleet_current(void)
{
    return current;
}

static void count_error(void *ctx)
{
    vf_metrics_count_state_error(ctx);
}

/* The tenant quota's shared hook: a prepared lookup's trip carries more. */
static int tenant_acquire(void *ctx, const char *name, const vf_quota_limits *l, vf_quota_verdict *v,
                          unsigned *retry_after_s)
{
    vf_fleet *f = ctx;
    int decided = 0;
    if (vf_fleet_sliced_acquire(name)) {
        *v = VF_QUOTA_OK;   /* its token was taken from this pod's slice */
        *retry_after_s = 0;
        return 1;
    }
    if (vf_fleet_plan_quota(f, name, l, v, retry_after_s, &decided))
        return decided;
    return vf_shared_quota_acquire(f->tenant_q, name, l, v, retry_after_s);
}

static void tenant_release(void *ctx, const char *name)
{
    vf_fleet *f = ctx;
    if (!vf_fleet_sliced_release(name) && !vf_fleet_plan_leaseless(name))
        vf_shared_quota_release(f->tenant_q, name);
}

vf_fleet *vf_fleet_new(vf_quota *tenant_quota, vf_circuit_registry *circuits, vf_metrics *metrics,
                       const vf_config *cfg, char *err, size_t errlen)
{
    vf_fleet *f = calloc(1, sizeof *f);
    if (!f || !(f->lru = vf_lru_new()) || !(f->key_quota = vf_quota_new())) {
        if (f) {
            vf_lru_free(f->lru);
            free(f);
        }
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&f->flights_lock, NULL);
    f->metrics = metrics;
    if (cfg->state.redis) {
        f->st = vf_state_new(&cfg->state, count_error, metrics);
        f->tenant_q = f->st ? vf_shared_quota_new(f->st, "tenant") : NULL;
        f->key_q = f->st ? vf_shared_quota_new(f->st, "pkey") : NULL;
        if (!f->st || !f->tenant_q || !f->key_q) {
            snprintf(err, errlen, "state: cannot set up the shared store client");
            vf_fleet_free(f);
            return NULL;
        }
        vf_quota_shared tq = { tenant_acquire, tenant_release, f };
        vf_quota_shared kq = { vf_shared_quota_acquire, vf_shared_quota_release, f->key_q };
        vf_quota_set_shared(tenant_quota, &tq);
        vf_quota_set_shared(f->key_quota, &kq);
        vf_shared_circuit_ops(f->st, &f->circuit_ops);
        vf_circuit_set_shared(circuits, &f->circuit_ops);
    }
    current = f;
    return f;
}

void vf_fleet_free(vf_fleet *f)
{
    if (!f)
        return;
    if (current == f)
        current = NULL;
    vf_shared_quota_free(f->tenant_q);
    vf_shared_quota_free(f->key_q);
    vf_state_free(f->st);
    vf_lru_free(f->lru);
    vf_quota_free(f->key_quota);
    pthread_mutex_destroy(&f->flights_lock);
    free(f);
}

/* A provider key's quota name: a hash of the key itself, so every tenant (and
 * pod) using one key shares one counter; the key never leaves the broker.
 * Keyless providers count per tenant and provider. */
static void key_id(const vf_tenant_config *t, const vf_provider_config *p, char out[VF_QUOTA_NAME_MAX + 1])
{
    char hex[33];
    if (p->secret) {
        size_t n = strlen(p->secret);
        char *buf = malloc(n + 16);
        if (buf) {
            memcpy(buf, "verifetch-key:", 14);
            memcpy(buf + 14, p->secret, n);
            vf_fleet_hash_hex(buf, n + 14, hex, 32);
            explicit_bzero(buf, n + 14);
            free(buf);
        } else {
            snprintf(hex, sizeof hex, "unhashed");
        }
        snprintf(out, VF_QUOTA_NAME_MAX + 1, "k%s", hex);
        return;
    }
    char both[2 * 64 + 2];
    int n = snprintf(both, sizeof both, "%s/%s", t->name, p->name);
    vf_fleet_hash_hex(both, (size_t)(n > 0 ? n : 0), hex, 32);
    snprintf(out, VF_QUOTA_NAME_MAX + 1, "p%s", hex);
}

int vf_fleet_configure(vf_fleet *f, const vf_config *cfg, char *err, size_t errlen)
{
    uint64_t now = (uint64_t)vf_now_ms();
    for (size_t i = 0; i < cfg->n_tenants; i++) {
        const vf_tenant_config *t = &cfg->tenants[i];
        for (size_t j = 0; j < t->n_providers; j++) {
            const vf_provider_config *p = &t->providers[j];
            if (!p->quota.requests_per_minute && !p->quota.concurrent)
                continue;
            char id[VF_QUOTA_NAME_MAX + 1];
            key_id(t, p, id);
            vf_quota_limits l = { .max_concurrent = p->quota.concurrent,
                                  .requests_per_minute = p->quota.requests_per_minute };
            if (vf_quota_configure(f->key_quota, id, &l, now) != 0) {
                snprintf(err, errlen, "tenant %s provider %s: cannot register its key quota", t->name, p->name);
                return -1;
            }
        }
    }
    return 0;
}

bool vf_fleet_provider_acquire(vf_fleet *f, const vf_tenant_config *t, const vf_provider_config *p,
                               unsigned *retry_after_s)
{
    *retry_after_s = 0;
    if (!f || (!p->quota.requests_per_minute && !p->quota.concurrent))
        return true;
    char id[VF_QUOTA_NAME_MAX + 1];
    key_id(t, p, id);
    unsigned retry = 0;
    vf_quota_verdict v = vf_quota_acquire(f->key_quota, id, (uint64_t)vf_now_ms(), &retry);
    if (v == VF_QUOTA_UNKNOWN_TENANT)
        return true;   /* registered at configure; a miss is a broker bug, not a reason to refuse */
    *retry_after_s = v == VF_QUOTA_OK ? 0 : (retry ? retry : 1);
    return v == VF_QUOTA_OK;
}

void vf_fleet_provider_release(vf_fleet *f, const vf_tenant_config *t, const vf_provider_config *p)
{
    if (!f || (!p->quota.requests_per_minute && !p->quota.concurrent))
        return;
    char id[VF_QUOTA_NAME_MAX + 1];
    key_id(t, p, id);
    vf_quota_release(f->key_quota, id);
}

void vf_fleet_writes_begin(const vf_fleet *f)
{
    if (f && f->st)
        vf_state_defer_begin();
}

void vf_fleet_writes_send(vf_fleet *f)
{
    if (f && f->st) {
        vf_fleet_plan_end(f);   /* its unlock joins the writes */
        vf_state_defer_send(f->st);
    }
}

void vf_fleet_writes_settle(const vf_fleet *f)
{
    if (f && f->st)
        vf_state_settle(f->st);
}

uint64_t vf_fleet_round_trips(const vf_fleet *f)
{
    return f ? vf_state_round_trips(f->st) : 0;
}

bool vf_fleet_degraded(void)
{
    return current && current->st && vf_state_degraded(current->st);
}

const char *vf_fleet_state_name(void)
{
    if (!current || !current->st)
        return "local";
    return vf_fleet_degraded() ? "degraded" : "ok";
}
