#include "policy/circuit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/grow_array.h"

/* One breaker's state machine; the registry below only finds and locks it. */
typedef struct {
    vf_circuit_state state;
    unsigned consecutive;
    uint64_t window_bits;     /* bit i = outcome i steps ago was a failure */
    unsigned window_count;    /* outcomes in the window, <= params.window */
    uint64_t opened_at;
    uint64_t probe_gen;       /* outstanding probe, 0 = none */
    uint64_t probe_started;
} breaker;

typedef struct {
    char host[VF_CIRCUIT_HOST_MAX + 1];
    breaker b;
    uint64_t last_used;       /* registry tick, for LRU eviction */
} host_entry;

typedef struct {
    char name[VF_CIRCUIT_NAME_MAX + 1];
    breaker b;
    bool has_latency;
    double ewma_ms;
    host_entry *hosts;
    size_t n_hosts, cap_hosts;
} provider_entry;

typedef struct {
    char name[VF_CIRCUIT_NAME_MAX + 1];
    vf_circuit_params params;
    provider_entry *providers;
    size_t n_providers, cap_providers;
} tenant_entry;

struct vf_circuit_registry {
    pthread_mutex_t lock;
    vf_circuit_params defaults;
    tenant_entry *tenants;
    size_t n_tenants, cap_tenants;
    uint64_t next_gen;
    uint64_t tick;
    vf_circuit_shared shared;   /* fleet-wide health; all NULL = local only */
};

void vf_circuit_set_shared(vf_circuit_registry *r, const vf_circuit_shared *shared)
{
    if (r)
        r->shared = shared ? *shared : (vf_circuit_shared){ 0 };
}

/* How a result relates to the breaker's probe. */
typedef enum { RESULT_GATED, RESULT_OBSERVED } result_mode;

void vf_circuit_params_default(vf_circuit_params *p)
{
    p->failure_threshold = 5;
    p->window = 20;
    p->min_samples = 10;
    p->failure_rate = 0.5;
    p->cooldown_ms = 30000;
    p->probe_lease_ms = 60000;
    p->ewma_alpha = 0.3;
    p->max_domains = 256;
}

int vf_circuit_params_validate(const vf_circuit_params *p, char *err, size_t errlen)
{
    const char *msg = NULL;
    if (p->window < 1 || p->window > VF_CIRCUIT_MAX_WINDOW)
        msg = "window: must be 1..64";
    else if (p->min_samples < 1 || p->min_samples > p->window)
        msg = "min_samples: must be 1..window";
    else if (!(p->failure_rate >= 0.0 && p->failure_rate <= 1.0))
        msg = "failure_rate: must be 0..1";
    else if (p->failure_threshold == 0 && p->failure_rate == 0.0)
        msg = "failure_threshold/failure_rate: at least one rule must be on";
    else if (p->cooldown_ms < 1)
        msg = "cooldown_ms: must be at least 1";
    else if (p->probe_lease_ms < 1)
        msg = "probe_lease_ms: must be at least 1";
    else if (!(p->ewma_alpha > 0.0 && p->ewma_alpha <= 1.0))
        msg = "ewma_alpha: must be in (0, 1]";
    else if (p->max_domains < 1 || p->max_domains > VF_CIRCUIT_MAX_DOMAINS)
        msg = "max_domains: must be 1..4096";
    if (!msg)
        return 0;
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
    return -1;
}

const char *vf_circuit_state_name(vf_circuit_state s)
{
    switch (s) {
    case VF_CIRCUIT_CLOSED: return "closed";
    case VF_CIRCUIT_OPEN: return "open";
    case VF_CIRCUIT_HALF_OPEN: return "half_open";
    }
    return "unknown";
}

/* ---- the state machine ---- */

static uint64_t elapsed(uint64_t since, uint64_t now)
{
    return now > since ? now - since : 0;
}

static void breaker_close(breaker *b)
{
    memset(b, 0, sizeof *b);
}

static void breaker_open(breaker *b, uint64_t now)
{
    b->state = VF_CIRCUIT_OPEN;
    b->opened_at = now;
    b->probe_gen = 0;
}

static bool cooldown_over(const breaker *b, const vf_circuit_params *p, uint64_t now)
{
    return elapsed(b->opened_at, now) >= p->cooldown_ms;
}

typedef enum { CHECK_PASS, CHECK_PROBE, CHECK_REFUSE } check_result;

static check_result breaker_check(const breaker *b, const vf_circuit_params *p, uint64_t now,
                                  uint64_t *retry_in_ms)
{
    *retry_in_ms = 0;
    switch (b->state) {
    case VF_CIRCUIT_CLOSED:
        return CHECK_PASS;
    case VF_CIRCUIT_OPEN:
        if (cooldown_over(b, p, now))
            return CHECK_PROBE;
        *retry_in_ms = p->cooldown_ms - elapsed(b->opened_at, now);
        return CHECK_REFUSE;
    case VF_CIRCUIT_HALF_OPEN:
        /* A released or abandoned probe slot is free again. */
        if (b->probe_gen == 0 || elapsed(b->probe_started, now) >= p->probe_lease_ms)
            return CHECK_PROBE;
        return CHECK_REFUSE;
    }
    return CHECK_PASS;
}

static void breaker_take_probe(breaker *b, uint64_t gen, uint64_t now)
{
    b->state = VF_CIRCUIT_HALF_OPEN;
    b->probe_gen = gen;
    b->probe_started = now;
}

static unsigned window_failures(const breaker *b, const vf_circuit_params *p)
{
    uint64_t mask = p->window >= 64 ? UINT64_MAX : ((UINT64_C(1) << p->window) - 1);
    return (unsigned)__builtin_popcountll(b->window_bits & mask);
}

/* Counts one outcome while closed; opens when a rule trips. */
static void breaker_count(breaker *b, const vf_circuit_params *p, bool failure, uint64_t now)
{
    b->window_bits = (b->window_bits << 1) | (failure ? 1u : 0u);
    if (b->window_count < p->window)
        b->window_count++;
    b->consecutive = failure ? b->consecutive + 1 : 0;
    if (!failure)
        return;
    bool by_streak = p->failure_threshold > 0 && b->consecutive >= p->failure_threshold;
    unsigned samples = b->window_count < p->window ? b->window_count : p->window;
    bool by_rate = p->failure_rate > 0.0 && samples >= p->min_samples &&
                   (double)window_failures(b, p) >= p->failure_rate * (double)samples;
    if (by_streak || by_rate)
        breaker_open(b, now);
}

static void settle(breaker *b, bool failure, uint64_t now)
{
    if (failure)
        breaker_open(b, now);
    else
        breaker_close(b);
}

/* probe_gen: what the ticket holds for this breaker (0 = no probe). */
static void breaker_result(breaker *b, const vf_circuit_params *p, bool failure, uint64_t probe_gen,
                           result_mode mode, uint64_t now)
{
    switch (b->state) {
    case VF_CIRCUIT_CLOSED:
        breaker_count(b, p, failure, now);
        return;
    case VF_CIRCUIT_HALF_OPEN:
        /* Only the current probe decides; stragglers and stale probes do not. */
        if (probe_gen != 0 && probe_gen == b->probe_gen)
            settle(b, failure, now);
        return;
    case VF_CIRCUIT_OPEN:
        /* An ungated attempt reporting after the cooldown is as good as a probe;
         * a gated one was admitted before the circuit opened and says nothing. */
        if (mode == RESULT_OBSERVED && cooldown_over(b, p, now))
            settle(b, failure, now);
        return;
    }
}

static void breaker_release(breaker *b, uint64_t probe_gen)
{
    if (probe_gen != 0 && b->state == VF_CIRCUIT_HALF_OPEN && b->probe_gen == probe_gen)
        b->probe_gen = 0;
}

/* ---- the registry ---- */

vf_circuit_registry *vf_circuit_registry_new(const vf_circuit_params *defaults)
{
    vf_circuit_params p;
    if (defaults)
        p = *defaults;
    else
        vf_circuit_params_default(&p);
    if (vf_circuit_params_validate(&p, NULL, 0) != 0)
        return NULL;
    vf_circuit_registry *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return NULL;
    }
    r->defaults = p;
    return r;
}

void vf_circuit_registry_free(vf_circuit_registry *r)
{
    if (!r)
        return;
    for (size_t t = 0; t < r->n_tenants; t++) {
        for (size_t i = 0; i < r->tenants[t].n_providers; i++)
            free(r->tenants[t].providers[i].hosts);
        free(r->tenants[t].providers);
    }
    free(r->tenants);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static bool name_ok(const char *name)
{
    return name && name[0] && strlen(name) <= VF_CIRCUIT_NAME_MAX;
}


static tenant_entry *find_tenant(vf_circuit_registry *r, const char *name, bool create)
{
    for (size_t i = 0; i < r->n_tenants; i++)
        if (strcmp(r->tenants[i].name, name) == 0)
            return &r->tenants[i];
    if (!create || !name_ok(name) ||
        !vf_grow_array((void **)&r->tenants, &r->cap_tenants, r->n_tenants, sizeof *r->tenants,
                 VF_CIRCUIT_MAX_TENANTS))
        return NULL;
    tenant_entry *t = &r->tenants[r->n_tenants++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->params = r->defaults;
    return t;
}

static provider_entry *find_provider(tenant_entry *t, const char *name, bool create)
{
    for (size_t i = 0; i < t->n_providers; i++)
        if (strcmp(t->providers[i].name, name) == 0)
            return &t->providers[i];
    if (!create || !name_ok(name) ||
        !vf_grow_array((void **)&t->providers, &t->cap_providers, t->n_providers, sizeof *t->providers,
                 VF_CIRCUIT_MAX_PROVIDERS))
        return NULL;
    provider_entry *p = &t->providers[t->n_providers++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    return p;
}

static host_entry *find_host(provider_entry *p, const char *host)
{
    for (size_t i = 0; i < p->n_hosts; i++)
        if (strcmp(p->hosts[i].host, host) == 0)
            return &p->hosts[i];
    return NULL;
}

/* Victim when the host table is full: the least recently used closed circuit,
 * so a flood of new hosts cannot flush the circuits that are actually open. */
static size_t eviction_victim(const provider_entry *p)
{
    size_t best = SIZE_MAX, best_any = 0;
    for (size_t i = 0; i < p->n_hosts; i++) {
        if (p->hosts[i].last_used < p->hosts[best_any].last_used)
            best_any = i;
        if (p->hosts[i].b.state == VF_CIRCUIT_CLOSED &&
            (best == SIZE_MAX || p->hosts[i].last_used < p->hosts[best].last_used))
            best = i;
    }
    return best != SIZE_MAX ? best : best_any;
}

static host_entry *add_host(provider_entry *p, const vf_circuit_params *params, const char *host)
{
    while (p->n_hosts >= params->max_domains && p->n_hosts > 0) {
        size_t victim = eviction_victim(p);
        p->hosts[victim] = p->hosts[--p->n_hosts];
    }
    if (!vf_grow_array((void **)&p->hosts, &p->cap_hosts, p->n_hosts, sizeof *p->hosts, params->max_domains))
        return NULL;
    host_entry *h = &p->hosts[p->n_hosts++];
    memset(h, 0, sizeof *h);
    memcpy(h->host, host, strlen(host) + 1);   /* normalized: <= VF_CIRCUIT_HOST_MAX */
    return h;
}

int vf_circuit_configure_tenant(vf_circuit_registry *r, const char *tenant, const vf_circuit_params *p)
{
    if (!r || !p || vf_circuit_params_validate(p, NULL, 0) != 0)
        return -1;
    pthread_mutex_lock(&r->lock);
    tenant_entry *t = find_tenant(r, tenant, true);
    if (t)
        t->params = *p;
    pthread_mutex_unlock(&r->lock);
    return t ? 0 : -1;
}

static void fill_decision(vf_circuit_decision *why, bool admitted, bool probe, bool domain,
                          vf_circuit_state state, uint64_t retry_in)
{
    if (!why)
        return;
    why->admitted = admitted;
    why->probe = probe;
    why->domain_scoped = domain;
    why->state = state;
    why->retry_in_ms = retry_in;
}

/* Locally admitted: the fleet may still refuse (its circuit is open, or its
 * one half-open probe is out) or hand this attempt the fleet-wide probe. */
static bool shared_admit(vf_circuit_registry *r, vf_circuit_ticket *ticket, const char *host,
                         const vf_circuit_params *params, vf_circuit_decision *why)
{
    unsigned mask = 0;
    uint64_t retry = 0;
    int verdict = r->shared.admit(r->shared.ctx, ticket->tenant, ticket->provider, host, params, &mask, &retry);
    if (verdict == 0) {
        vf_circuit_release(r, ticket);   /* gives back any local probe; marks the ticket done */
        fill_decision(why, false, false, false, retry ? VF_CIRCUIT_OPEN : VF_CIRCUIT_HALF_OPEN, retry);
        return false;
    }
    if (verdict == 1 && mask) {
        ticket->shared_probe = mask;
        why->probe = true;
        why->state = VF_CIRCUIT_HALF_OPEN;
    }
    return true;
}

bool vf_circuit_admit(vf_circuit_registry *r, const char *tenant, const char *provider,
                      const char *host, uint64_t now_ms, vf_circuit_ticket *ticket,
                      vf_circuit_decision *why)
{
    fill_decision(why, true, false, false, VF_CIRCUIT_CLOSED, 0);
    if (!ticket)
        return true;   /* nothing could report back: admit untracked, take no probe */
    vf_circuit_ticket_observe(ticket, tenant, provider, host);
    ticket->gated = true;
    if (!r || !name_ok(tenant) || !name_ok(provider))
        return true;
    char norm[VF_CIRCUIT_HOST_MAX + 1];
    bool scoped = vf_host_normalize(host, norm, sizeof norm);

    pthread_mutex_lock(&r->lock);
    tenant_entry *t = find_tenant(r, tenant, true);
    provider_entry *p = t ? find_provider(t, provider, true) : NULL;
    if (!p) {
        pthread_mutex_unlock(&r->lock);
        return true;
    }
    host_entry *h = scoped ? find_host(p, norm) : NULL;
    if (h)
        h->last_used = ++r->tick;
    vf_circuit_params params = t->params;

    /* Decide on both circuits first, then take probes, so a refusal by one
     * never leaves the other's probe slot taken. */
    uint64_t retry_global, retry_host = 0;
    check_result g = breaker_check(&p->b, &t->params, now_ms, &retry_global);
    check_result d = h ? breaker_check(&h->b, &t->params, now_ms, &retry_host) : CHECK_PASS;
    bool admitted = g != CHECK_REFUSE && d != CHECK_REFUSE;
    if (!admitted) {
        bool domain = g != CHECK_REFUSE;
        fill_decision(why, false, false, domain, domain ? h->b.state : p->b.state,
                      domain ? retry_host : retry_global);
    } else {
        if (g == CHECK_PROBE) {
            ticket->probe_gen = ++r->next_gen;
            breaker_take_probe(&p->b, ticket->probe_gen, now_ms);
        }
        if (d == CHECK_PROBE) {
            ticket->domain_probe_gen = ++r->next_gen;
            breaker_take_probe(&h->b, ticket->domain_probe_gen, now_ms);
        }
        bool domain = d == CHECK_PROBE && g != CHECK_PROBE;
        fill_decision(why, true, g == CHECK_PROBE || d == CHECK_PROBE, domain,
                      domain ? h->b.state : p->b.state, 0);
    }
    pthread_mutex_unlock(&r->lock);
    if (!admitted)
        ticket->done = true;
    else if (r->shared.admit)
        admitted = shared_admit(r, ticket, scoped ? norm : NULL, &params, why);
    return admitted;
}

void vf_circuit_ticket_observe(vf_circuit_ticket *ticket, const char *tenant, const char *provider,
                               const char *host)
{
    memset(ticket, 0, sizeof *ticket);
    ticket->tenant = tenant;
    ticket->provider = provider;
    ticket->host = host;
}

static void update_latency(provider_entry *p, const vf_circuit_params *params, int64_t latency_ms)
{
    if (latency_ms < 0)
        return;
    double x = (double)latency_ms;
    p->ewma_ms = p->has_latency ? params->ewma_alpha * x + (1.0 - params->ewma_alpha) * p->ewma_ms : x;
    p->has_latency = true;
}

void vf_circuit_record(vf_circuit_registry *r, vf_circuit_ticket *ticket, vf_health_outcome outcome,
                       int64_t latency_ms, uint64_t now_ms)
{
    if (!r || !ticket || ticket->done)
        return;
    ticket->done = true;
    if (!name_ok(ticket->tenant) || !name_ok(ticket->provider))
        return;
    bool provider_failure = outcome == VF_HEALTH_TRANSPORT_ERROR || outcome == VF_HEALTH_HTTP_ERROR ||
                            outcome == VF_HEALTH_MALFORMED_RESPONSE;
    bool content_failure = outcome == VF_HEALTH_UNUSABLE_CONTENT;
    result_mode mode = ticket->gated ? RESULT_GATED : RESULT_OBSERVED;
    char norm[VF_CIRCUIT_HOST_MAX + 1];
    bool scoped = vf_host_normalize(ticket->host, norm, sizeof norm);

    pthread_mutex_lock(&r->lock);
    tenant_entry *t = find_tenant(r, ticket->tenant, true);
    vf_circuit_params params = t ? t->params : r->defaults;
    provider_entry *p = t ? find_provider(t, ticket->provider, true) : NULL;
    if (p) {
        update_latency(p, &t->params, latency_ms);
        breaker_result(&p->b, &t->params, provider_failure, ticket->probe_gen, mode, now_ms);
        host_entry *h = scoped ? find_host(p, norm) : NULL;
        if (h)
            h->last_used = ++r->tick;
        if (provider_failure) {
            /* Says nothing about the content this host serves: no verdict. */
            if (h)
                breaker_release(&h->b, ticket->domain_probe_gen);
        } else if (h) {
            breaker_result(&h->b, &t->params, content_failure, ticket->domain_probe_gen, mode, now_ms);
        } else if (content_failure && scoped) {
            /* Host circuits exist only where content failed, which bounds the table
             * by trouble seen rather than by every host ever fetched. */
            h = add_host(p, &t->params, norm);
            if (h) {
                h->last_used = ++r->tick;
                breaker_count(&h->b, &t->params, true, now_ms);
            }
        }
    }
    pthread_mutex_unlock(&r->lock);
    if (r->shared.record)
        r->shared.record(r->shared.ctx, ticket->tenant, ticket->provider, scoped ? norm : NULL, &params,
                         provider_failure, content_failure, ticket->shared_probe);
}

void vf_circuit_release(vf_circuit_registry *r, vf_circuit_ticket *ticket)
{
    if (!r || !ticket || ticket->done)
        return;
    ticket->done = true;
    if (!name_ok(ticket->tenant) || !name_ok(ticket->provider))
        return;
    char norm[VF_CIRCUIT_HOST_MAX + 1];
    bool scoped = vf_host_normalize(ticket->host, norm, sizeof norm);
    if (ticket->shared_probe && r->shared.release)
        r->shared.release(r->shared.ctx, ticket->tenant, ticket->provider, scoped ? norm : NULL,
                          ticket->shared_probe);
    if (!ticket->probe_gen && !ticket->domain_probe_gen)
        return;
    pthread_mutex_lock(&r->lock);
    tenant_entry *t = find_tenant(r, ticket->tenant, false);
    provider_entry *p = t ? find_provider(t, ticket->provider, false) : NULL;
    if (p) {
        breaker_release(&p->b, ticket->probe_gen);
        host_entry *h = scoped ? find_host(p, norm) : NULL;
        if (h)
            breaker_release(&h->b, ticket->domain_probe_gen);
    }
    pthread_mutex_unlock(&r->lock);
}

static void snapshot_breaker(const breaker *b, const vf_circuit_params *p, uint64_t now,
                             vf_circuit_snapshot *out)
{
    out->state = b->state;
    out->consecutive_failures = b->consecutive;
    out->window_samples = b->window_count;
    out->window_failures = window_failures(b, p);
    if (b->state == VF_CIRCUIT_OPEN && !cooldown_over(b, p, now))
        out->cooldown_left_ms = p->cooldown_ms - elapsed(b->opened_at, now);
    out->probe_in_flight = b->state == VF_CIRCUIT_HALF_OPEN && b->probe_gen != 0 &&
                           elapsed(b->probe_started, now) < p->probe_lease_ms;
}

bool vf_circuit_snapshot_get(vf_circuit_registry *r, const char *tenant, const char *provider,
                             const char *host, uint64_t now_ms, vf_circuit_snapshot *out)
{
    memset(out, 0, sizeof *out);
    out->state = VF_CIRCUIT_CLOSED;
    if (!r || !name_ok(tenant) || !name_ok(provider))
        return false;
    char norm[VF_CIRCUIT_HOST_MAX + 1];
    if (host && !vf_host_normalize(host, norm, sizeof norm))
        return false;
    bool found = false;
    pthread_mutex_lock(&r->lock);
    tenant_entry *t = find_tenant(r, tenant, false);
    provider_entry *p = t ? find_provider(t, provider, false) : NULL;
    if (p && !host) {
        snapshot_breaker(&p->b, &t->params, now_ms, out);
        out->has_latency = p->has_latency;
        out->ewma_latency_ms = p->ewma_ms;
        out->tracked_hosts = p->n_hosts;
        found = true;
    } else if (p) {
        host_entry *h = find_host(p, norm);
        if (h) {
            snapshot_breaker(&h->b, &t->params, now_ms, out);
            found = true;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return found;
}
