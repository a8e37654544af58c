#include "broker/api/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/grow_array.h"

/* Label values of the enums, indexed by their numeric value. */
static const char *const status_names[] = { "success", "error", "bad_request", "throttled" };
static const char *const outcome_names[] = { "ok", "transport_error", "http_error", "unusable_content",
                                             "malformed_response" };
#define N_STATUS   (sizeof status_names / sizeof status_names[0])
#define N_OUTCOME  (sizeof outcome_names / sizeof outcome_names[0])
_Static_assert(VF_OUTCOME_MALFORMED_RESPONSE + 1 == N_OUTCOME, "outcome label table out of date");
_Static_assert(VF_LOOKUP_THROTTLED + 1 == N_STATUS, "status label table out of date");

/* Spawns measure ~1.3-2.3 ms here; lookups span one fast page to ten slow attempts. */
static const double spawn_bounds[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1 };
static const double lookup_bounds[] = { 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120 };
#define MAX_BUCKETS 12u
#define RULE_OTHER  VF_METRICS_MAX_RULES   /* index of rule="other" */

typedef struct {
    const double *bounds;
    size_t n_bounds;
    uint64_t in_bucket[MAX_BUCKETS + 1];   /* per bucket, not cumulative; last = above every bound */
    uint64_t count;
    double sum;
} histogram;

typedef struct {
    char *name;
    uint64_t attempts[N_OUTCOME];
    int circuit_state;
} provider_series;

typedef struct {
    char *name;
    uint64_t lookups[N_STATUS];
    histogram lookup_seconds;
    uint64_t denials[VF_METRICS_MAX_RULES + 1];
    provider_series *providers;
    size_t n_providers, cap_providers;
} tenant_series;

struct vf_metrics {
    pthread_mutex_t lock;
    tenant_series *tenants;
    size_t n_tenants, cap_tenants;
    char *rules[VF_METRICS_MAX_RULES];
    size_t n_rules;
    histogram spawn_seconds;
    long long workers_active;
    long long state_errors;
    long long state_trips;
    long long cache_results[3];   /* hit, miss, bypass */
};

void vf_metrics_count_state_error(vf_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    m->state_errors++;
    pthread_mutex_unlock(&m->lock);
}

void vf_metrics_set_state_round_trips(vf_metrics *m, long long trips)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    m->state_trips = trips;
    pthread_mutex_unlock(&m->lock);
}

void vf_metrics_count_cache(vf_metrics *m, int result)
{
    if (!m || result < 0 || result > 2)
        return;
    pthread_mutex_lock(&m->lock);
    m->cache_results[result]++;
    pthread_mutex_unlock(&m->lock);
}

static void histogram_init(histogram *h, const double *bounds, size_t n)
{
    memset(h, 0, sizeof *h);
    h->bounds = bounds;
    h->n_bounds = n;
}

static void histogram_observe(histogram *h, double v)
{
    size_t i = 0;
    while (i < h->n_bounds && v > h->bounds[i])
        i++;
    h->in_bucket[i]++;
    h->count++;
    h->sum += v;
}

vf_metrics *vf_metrics_new(void)
{
    _Static_assert(sizeof spawn_bounds / sizeof spawn_bounds[0] <= MAX_BUCKETS, "spawn buckets");
    _Static_assert(sizeof lookup_bounds / sizeof lookup_bounds[0] <= MAX_BUCKETS, "lookup buckets");
    vf_metrics *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return NULL;
    }
    histogram_init(&m->spawn_seconds, spawn_bounds, sizeof spawn_bounds / sizeof spawn_bounds[0]);
    return m;
}

void vf_metrics_free(vf_metrics *m)
{
    if (!m)
        return;
    for (size_t t = 0; t < m->n_tenants; t++) {
        for (size_t p = 0; p < m->tenants[t].n_providers; p++)
            free(m->tenants[t].providers[p].name);
        free(m->tenants[t].providers);
        free(m->tenants[t].name);
    }
    free(m->tenants);
    for (size_t r = 0; r < m->n_rules; r++)
        free(m->rules[r]);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static bool label_ok(const char *v)
{
    return v && v[0] && strlen(v) <= VF_METRICS_LABEL_MAX;
}


static tenant_series *find_tenant(vf_metrics *m, const char *name)
{
    for (size_t i = 0; name && i < m->n_tenants; i++)
        if (strcmp(m->tenants[i].name, name) == 0)
            return &m->tenants[i];
    return NULL;
}

static provider_series *find_provider(tenant_series *t, const char *name)
{
    for (size_t i = 0; t && name && i < t->n_providers; i++)
        if (strcmp(t->providers[i].name, name) == 0)
            return &t->providers[i];
    return NULL;
}

static int add_provider(tenant_series *t, const char *name)
{
    if (find_provider(t, name))
        return 0;
    if (!vf_grow_array((void **)&t->providers, &t->cap_providers, t->n_providers, sizeof *t->providers,
              VF_METRICS_MAX_PROVIDERS))
        return -1;
    provider_series *p = &t->providers[t->n_providers];
    memset(p, 0, sizeof *p);
    p->name = strdup(name);
    if (!p->name)
        return -1;
    t->n_providers++;
    return 0;
}

int vf_metrics_add_tenant(vf_metrics *m, const char *tenant, const char *const *providers, size_t n_providers)
{
    if (!m || !label_ok(tenant) || (n_providers && !providers))
        return -1;
    for (size_t i = 0; i < n_providers; i++)
        if (!label_ok(providers[i]))
            return -1;
    int rc = 0;
    pthread_mutex_lock(&m->lock);
    tenant_series *t = find_tenant(m, tenant);
    if (!t) {
        if (!vf_grow_array((void **)&m->tenants, &m->cap_tenants, m->n_tenants, sizeof *m->tenants,
                  VF_METRICS_MAX_TENANTS)) {
            rc = -1;
            goto out;
        }
        t = &m->tenants[m->n_tenants];
        memset(t, 0, sizeof *t);
        t->name = strdup(tenant);
        if (!t->name) {
            rc = -1;
            goto out;
        }
        histogram_init(&t->lookup_seconds, lookup_bounds, sizeof lookup_bounds / sizeof lookup_bounds[0]);
        m->n_tenants++;
    }
    for (size_t i = 0; i < n_providers && rc == 0; i++)
        rc = add_provider(t, providers[i]);
out:
    pthread_mutex_unlock(&m->lock);
    return rc;
}

int vf_metrics_count_lookup(vf_metrics *m, const char *tenant, vf_lookup_status status)
{
    if (!m || (unsigned)status >= N_STATUS)
        return -1;
    pthread_mutex_lock(&m->lock);
    tenant_series *t = find_tenant(m, tenant);
    if (t)
        t->lookups[status]++;
    pthread_mutex_unlock(&m->lock);
    return t ? 0 : -1;
}

int vf_metrics_count_attempt(vf_metrics *m, const char *tenant, const char *provider, vf_outcome outcome)
{
    if (!m || (unsigned)outcome >= N_OUTCOME)
        return -1;
    pthread_mutex_lock(&m->lock);
    provider_series *p = find_provider(find_tenant(m, tenant), provider);
    if (p)
        p->attempts[outcome]++;
    pthread_mutex_unlock(&m->lock);
    return p ? 0 : -1;
}

/* Index of rule's label, interning it while there is room; RULE_OTHER after. */
static size_t rule_index(vf_metrics *m, const char *rule)
{
    for (size_t i = 0; i < m->n_rules; i++)
        if (strcmp(m->rules[i], rule) == 0)
            return i;
    if (m->n_rules >= VF_METRICS_MAX_RULES || strcmp(rule, "other") == 0)
        return RULE_OTHER;
    char *copy = strdup(rule);
    if (!copy)
        return RULE_OTHER;
    m->rules[m->n_rules] = copy;
    return m->n_rules++;
}

int vf_metrics_count_egress_denial(vf_metrics *m, const char *tenant, const char *rule)
{
    if (!m || !label_ok(rule))
        return -1;
    pthread_mutex_lock(&m->lock);
    tenant_series *t = find_tenant(m, tenant);
    if (t)
        t->denials[rule_index(m, rule)]++;
    pthread_mutex_unlock(&m->lock);
    return t ? 0 : -1;
}

static bool seconds_ok(double s)
{
    return isfinite(s) && s >= 0.0;
}

int vf_metrics_observe_lookup(vf_metrics *m, const char *tenant, double seconds)
{
    if (!m || !seconds_ok(seconds))
        return -1;
    pthread_mutex_lock(&m->lock);
    tenant_series *t = find_tenant(m, tenant);
    if (t)
        histogram_observe(&t->lookup_seconds, seconds);
    pthread_mutex_unlock(&m->lock);
    return t ? 0 : -1;
}

int vf_metrics_observe_spawn(vf_metrics *m, double seconds)
{
    if (!m || !seconds_ok(seconds))
        return -1;
    pthread_mutex_lock(&m->lock);
    histogram_observe(&m->spawn_seconds, seconds);
    pthread_mutex_unlock(&m->lock);
    return 0;
}

int vf_metrics_set_circuit_state(vf_metrics *m, const char *tenant, const char *provider, int state)
{
    if (!m || state < 0 || state > 2)
        return -1;
    pthread_mutex_lock(&m->lock);
    provider_series *p = find_provider(find_tenant(m, tenant), provider);
    if (p)
        p->circuit_state = state;
    pthread_mutex_unlock(&m->lock);
    return p ? 0 : -1;
}

void vf_metrics_workers_add(vf_metrics *m, int delta)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    m->workers_active += delta;
    pthread_mutex_unlock(&m->lock);
}

/* ---- rendering ---- */

typedef struct {
    char *buf;
    size_t len, cap;
    bool failed;
} text;

static void put(text *o, const char *fmt, ...)
{
    if (o->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            o->failed = true;
            return;
        }
        if ((size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        size_t next = o->cap * 2 + (size_t)n;
        char *grown = realloc(o->buf, next);
        if (!grown) {
            o->failed = true;
            return;
        }
        o->buf = grown;
        o->cap = next;
    }
}

/* Label value escaping per the 0.0.4 text format: backslash, quote, newline. */
static void put_label(text *o, const char *name, const char *value, bool first)
{
    put(o, "%s%s=\"", first ? "" : ",", name);
    for (const char *c = value; *c; c++) {
        if (*c == '\\')
            put(o, "\\\\");
        else if (*c == '"')
            put(o, "\\\"");
        else if (*c == '\n')
            put(o, "\\n");
        else
            put(o, "%c", *c);
    }
    put(o, "\"");
}

static void put_number(text *o, double v)
{
    if (isnan(v))
        put(o, "NaN");
    else if (isinf(v))
        put(o, v > 0 ? "+Inf" : "-Inf");
    else
        put(o, "%.15g", v);
}

static void put_family(text *o, const char *name, const char *type, const char *help)
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static bool visible(const tenant_series *t, const char *filter)
{
    return !filter || strcmp(t->name, filter) == 0;
}

/* _bucket/_sum/_count rows; tenant NULL = unlabelled (global) histogram. */
static void put_histogram(text *o, const char *name, const char *tenant, const histogram *h)
{
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= h->n_bounds; i++) {
        cumulative += h->in_bucket[i];
        put(o, "%s_bucket{", name);
        if (tenant)
            put_label(o, "tenant", tenant, true);
        put(o, "%sle=\"", tenant ? "," : "");
        if (i < h->n_bounds)
            put_number(o, h->bounds[i]);
        else
            put(o, "+Inf");
        put(o, "\"} %" PRIu64 "\n", cumulative);
    }
    put(o, "%s_sum", name);
    if (tenant) {
        put(o, "{");
        put_label(o, "tenant", tenant, true);
        put(o, "}");
    }
    put(o, " ");
    put_number(o, h->sum);
    put(o, "\n%s_count", name);
    if (tenant) {
        put(o, "{");
        put_label(o, "tenant", tenant, true);
        put(o, "}");
    }
    put(o, " %" PRIu64 "\n", h->count);
}

static void render_counters(text *o, const vf_metrics *m, const char *filter)
{
    put_family(o, "verifetch_lookups_total", "counter", "Lookups by tenant and result status.");
    for (size_t i = 0; i < m->n_tenants; i++) {
        const tenant_series *t = &m->tenants[i];
        for (size_t s = 0; visible(t, filter) && s < N_STATUS; s++) {
            put(o, "verifetch_lookups_total{");
            put_label(o, "tenant", t->name, true);
            put_label(o, "status", status_names[s], false);
            put(o, "} %" PRIu64 "\n", t->lookups[s]);
        }
    }
    put_family(o, "verifetch_attempts_total", "counter", "Provider attempts by tenant, provider and outcome.");
    for (size_t i = 0; i < m->n_tenants; i++) {
        const tenant_series *t = &m->tenants[i];
        for (size_t p = 0; visible(t, filter) && p < t->n_providers; p++)
            for (size_t k = 0; k < N_OUTCOME; k++) {
                put(o, "verifetch_attempts_total{");
                put_label(o, "tenant", t->name, true);
                put_label(o, "provider", t->providers[p].name, false);
                put_label(o, "outcome", outcome_names[k], false);
                put(o, "} %" PRIu64 "\n", t->providers[p].attempts[k]);
            }
    }
    put_family(o, "verifetch_egress_denials_total", "counter",
               "Connections refused by egress policy, by tenant and rule.");
    for (size_t i = 0; i < m->n_tenants; i++) {
        const tenant_series *t = &m->tenants[i];
        for (size_t r = 0; visible(t, filter) && r <= VF_METRICS_MAX_RULES; r++) {
            if (t->denials[r] == 0)
                continue;
            put(o, "verifetch_egress_denials_total{");
            put_label(o, "tenant", t->name, true);
            put_label(o, "rule", r == RULE_OTHER ? "other" : m->rules[r], false);
            put(o, "} %" PRIu64 "\n", t->denials[r]);
        }
    }
}

char *vf_metrics_render(vf_metrics *m, const char *tenant, size_t *len)
{
    if (!m)
        return NULL;
    text o = { malloc(4096), 0, 4096, false };
    if (!o.buf)
        return NULL;
    o.buf[0] = '\0';
    pthread_mutex_lock(&m->lock);
    /* Global series add up every tenant's activity: a tenant's own scrape
     * shows them only when it is the only tenant (issue 13 item 12). */
    bool global = !tenant || m->n_tenants < 2;
    render_counters(&o, m, tenant);
    put_family(&o, "verifetch_worker_spawn_seconds", "histogram", "Time to spawn one confined worker.");
    if (global)
        put_histogram(&o, "verifetch_worker_spawn_seconds", NULL, &m->spawn_seconds);
    put_family(&o, "verifetch_lookup_seconds", "histogram", "Lookup latency by tenant, every attempt included.");
    for (size_t i = 0; i < m->n_tenants; i++)
        if (visible(&m->tenants[i], tenant))
            put_histogram(&o, "verifetch_lookup_seconds", m->tenants[i].name, &m->tenants[i].lookup_seconds);
    put_family(&o, "verifetch_circuit_state", "gauge",
               "Provider circuit breaker state (0 closed, 1 open, 2 half-open).");
    for (size_t i = 0; i < m->n_tenants; i++) {
        const tenant_series *t = &m->tenants[i];
        for (size_t p = 0; visible(t, tenant) && p < t->n_providers; p++) {
            put(&o, "verifetch_circuit_state{");
            put_label(&o, "tenant", t->name, true);
            put_label(&o, "provider", t->providers[p].name, false);
            put(&o, "} %d\n", t->providers[p].circuit_state);
        }
    }
    put_family(&o, "verifetch_workers_active", "gauge", "Workers alive now.");
    if (global)
        put(&o, "verifetch_workers_active %lld\n", m->workers_active);
    put_family(&o, "verifetch_state_backend_errors_total", "counter",
               "Shared-store (Redis/Valkey) operations that failed; lookups fell back to local state.");
    if (global)
        put(&o, "verifetch_state_backend_errors_total %lld\n", m->state_errors);
    put_family(&o, "verifetch_state_round_trips_total", "counter",
               "Shared-store round trips a request waited for (a pipelined batch counts once).");
    if (global)
        put(&o, "verifetch_state_round_trips_total %lld\n", m->state_trips);
    put_family(&o, "verifetch_cache_lookups_total", "counter", "Lookup cache results.");
    static const char *const cache_results[] = { "hit", "miss", "bypass" };
    for (size_t r = 0; global && r < 3; r++)
        put(&o, "verifetch_cache_lookups_total{result=\"%s\"} %lld\n", cache_results[r], m->cache_results[r]);
    pthread_mutex_unlock(&m->lock);
    if (o.failed) {
        free(o.buf);
        return NULL;
    }
    if (len)
        *len = o.len;
    return o.buf;
}
