/* A small Prometheus registry for verifetchd's fixed metric families, rendered
 * in the text exposition format 0.0.4. Thread-safe (one mutex).
 *
 * Cardinality is fixed by construction: tenant and provider label values must
 * be registered first (from config names) and a sample for an unregistered
 * name is dropped (returns -1); outcome and status come from enums; egress
 * rule names are interned up to VF_METRICS_MAX_RULES, later ones count as
 * rule="other".
 *
 * Families: verifetch_lookups_total{tenant,status}
 *           verifetch_attempts_total{tenant,provider,outcome}
 *           verifetch_egress_denials_total{tenant,rule}      (rows only once seen)
 *           verifetch_worker_spawn_seconds                   (histogram, global)
 *           verifetch_lookup_seconds{tenant}                 (histogram)
 *           verifetch_circuit_state{tenant,provider}         (gauge 0 closed, 1 open, 2 half-open)
 *           verifetch_workers_active                         (gauge, global)
 *           verifetch_state_backend_errors_total, verifetch_state_round_trips_total,
 *           verifetch_cache_lookups_total{result}             (global)
 * Global families have samples in a tenant's scrape only when it is the
 * broker's one tenant. */
#ifndef VERIFETCH_METRICS_H
#define VERIFETCH_METRICS_H

#include <stddef.h>

#include "broker/judge/classify.h"

#define VF_METRICS_MAX_TENANTS   256u
#define VF_METRICS_MAX_PROVIDERS 64u    /* per tenant */
#define VF_METRICS_MAX_RULES     32u    /* distinct egress rule labels, "other" excluded */
#define VF_METRICS_LABEL_MAX     128u   /* label value length */

typedef enum {
    VF_LOOKUP_SUCCESS = 0,   /* ToolResult status success */
    VF_LOOKUP_ERROR,         /* ToolResult status error (every attempt failed) */
    VF_LOOKUP_BAD_REQUEST,   /* 400 */
    VF_LOOKUP_THROTTLED,     /* 429 from a quota */
} vf_lookup_status;

typedef struct vf_metrics vf_metrics;

vf_metrics *vf_metrics_new(void);
void vf_metrics_free(vf_metrics *m);

/* Register a tenant and its providers (idempotent; on reload, new providers are
 * added and existing series keep counting). 0, or -1 on a bad name or a cap. */
int vf_metrics_add_tenant(vf_metrics *m, const char *tenant, const char *const *providers, size_t n_providers);

/* Each returns 0, or -1 when a label is unregistered / a value is invalid
 * (nothing is recorded then). */
int vf_metrics_count_lookup(vf_metrics *m, const char *tenant, vf_lookup_status status);
int vf_metrics_count_attempt(vf_metrics *m, const char *tenant, const char *provider, vf_outcome outcome);
int vf_metrics_count_egress_denial(vf_metrics *m, const char *tenant, const char *rule);
int vf_metrics_observe_lookup(vf_metrics *m, const char *tenant, double seconds);   /* seconds >= 0 */
int vf_metrics_observe_spawn(vf_metrics *m, double seconds);
int vf_metrics_set_circuit_state(vf_metrics *m, const char *tenant, const char *provider, int state); /* 0..2 */
void vf_metrics_workers_add(vf_metrics *m, int delta);
/* Fleet (broker/fleet): failed shared-store operations; lookup cache results
 * (0 hit, 1 miss, 2 bypass). Global series, no tenant label. */
void vf_metrics_count_state_error(vf_metrics *m);
/* Shared-store round trips waited for so far (set at scrape time). */
void vf_metrics_set_state_round_trips(vf_metrics *m, long long trips);
void vf_metrics_count_cache(vf_metrics *m, int result);

/* The exposition text, malloc'd and NUL-terminated (*len without the NUL when
 * len is not NULL); NULL on allocation failure. tenant NULL = every series;
 * otherwise only that tenant's labelled series, so a tenant never sees
 * another's names, plus the global ones (spawn histogram, workers_active,
 * cache and shared-store counters) only when it is the only tenant: they
 * sum every tenant's activity. Every family always has its HELP and TYPE
 * lines. */
char *vf_metrics_render(vf_metrics *m, const char *tenant, size_t *len);

/* Content-Type to serve it with. */
#define VF_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
