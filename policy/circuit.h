/* Provider health: a circuit breaker per (tenant, provider) and, for content
 * failures, per (tenant, provider, host). Thread-safe (one mutex per registry).
 * Time is always passed in (monotonic milliseconds) so behaviour is
 * deterministic in tests and the module never reads a clock.
 *
 * States: closed (attempts flow) -> open (after the consecutive-failure or the
 * failure-rate rule trips; attempts are refused) -> after cooldown, half-open:
 * exactly one caller is admitted as the probe; its success closes the circuit,
 * its failure reopens it with a fresh cooldown. A probe that never reports
 * loses its slot after probe_lease_ms so a lost ticket cannot wedge a circuit.
 *
 * Outcome classes: transport_error, http_error and malformed_response count
 * against the provider everywhere. unusable_content counts against the
 * provider for that host only (cookie walls on one site do not sink it
 * elsewhere) and, provider-wide, counts as a working answer. */
#ifndef VERIFETCH_CIRCUIT_H
#define VERIFETCH_CIRCUIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/host_pattern.h"

#define VF_CIRCUIT_MAX_WINDOW     64u    /* outcomes the rate rule can remember */
#define VF_CIRCUIT_MAX_TENANTS    256u
#define VF_CIRCUIT_MAX_PROVIDERS  64u    /* per tenant (config allows 32; reloads may add) */
#define VF_CIRCUIT_MAX_DOMAINS    4096u  /* upper bound for max_domains */
#define VF_CIRCUIT_NAME_MAX       64u    /* tenant / provider name length */
#define VF_CIRCUIT_HOST_MAX       VF_HOST_NAME_MAX   /* longer hosts get no host-scoped circuit */

/* Numeric values are the metrics gauge values. */
typedef enum { VF_CIRCUIT_CLOSED = 0, VF_CIRCUIT_OPEN = 1, VF_CIRCUIT_HALF_OPEN = 2 } vf_circuit_state;

/* Same numbering as broker/classify.h vf_outcome (a test pins it), so the
 * broker may convert with a cast. Kept separate so policy/ needs no broker header. */
typedef enum {
    VF_HEALTH_OK = 0,
    VF_HEALTH_TRANSPORT_ERROR,
    VF_HEALTH_HTTP_ERROR,
    VF_HEALTH_UNUSABLE_CONTENT,
    VF_HEALTH_MALFORMED_RESPONSE,
} vf_health_outcome;

typedef struct {
    unsigned failure_threshold; /* consecutive failures that open; 0 = rule off (default 5) */
    unsigned window;            /* last N outcomes for the rate rule, 1..64 (default 20) */
    unsigned min_samples;       /* rate rule waits for this many, 1..window (default 10) */
    double failure_rate;        /* open when failures/samples >= this, 0..1; 0 = rule off (default 0.5) */
    uint64_t cooldown_ms;       /* open -> probe allowed after this (default 30000) */
    uint64_t probe_lease_ms;    /* unreported probe frees its slot after this (default 60000) */
    double ewma_alpha;          /* weight of the newest latency sample, (0,1] (default 0.3) */
    unsigned max_domains;       /* host-scoped circuits kept per provider, 1..4096 (default 256) */
} vf_circuit_params;

void vf_circuit_params_default(vf_circuit_params *p);
/* 0 when usable; else -1 and err names the field, e.g. "min_samples: must be 1..window (20)". */
int vf_circuit_params_validate(const vf_circuit_params *p, char *err, size_t errlen);

typedef struct vf_circuit_registry vf_circuit_registry;

/* defaults: params for tenants never configured (NULL = built-in defaults).
 * NULL on invalid params or allocation failure. */
vf_circuit_registry *vf_circuit_registry_new(const vf_circuit_params *defaults);
void vf_circuit_registry_free(vf_circuit_registry *r);

/* Set (or, on config reload, replace) one tenant's params; state is kept.
 * 0 on success, -1 on invalid params, a bad name or the tenant cap. */
int vf_circuit_configure_tenant(vf_circuit_registry *r, const char *tenant, const vf_circuit_params *p);

/* What one admitted attempt reports back with. The strings are borrowed and
 * must outlive the ticket (config names and the request host do). */
typedef struct {
    const char *tenant;
    const char *provider;
    const char *host;           /* may be NULL: no host scope */
    uint64_t probe_gen;         /* nonzero: holds the provider-wide half-open probe */
    uint64_t domain_probe_gen;  /* nonzero: holds the host-scoped half-open probe */
    bool gated;                 /* from vf_circuit_admit (else from vf_circuit_ticket_observe) */
    unsigned shared_probe;      /* fleet-wide probes held: bit 0 provider-wide, bit 1 host-scoped */
    bool done;                  /* recorded or released; later calls are no-ops */
} vf_circuit_ticket;

/* Why an attempt was (not) admitted, for the receipt's order reason. */
typedef struct {
    bool admitted;
    bool probe;                 /* admitted as a half-open probe */
    bool domain_scoped;         /* the host-scoped circuit decided */
    vf_circuit_state state;     /* state of the circuit that decided */
    uint64_t retry_in_ms;       /* refused: ms until a probe may go; 0 = a probe is in flight */
} vf_circuit_decision;

/* Health-gated admission: may `provider` be tried for `host` now? On true the
 * ticket must later go to vf_circuit_record or vf_circuit_release. Untracked
 * names are created on first use; when a cap or allocation fails, or ticket is
 * NULL, the attempt is admitted untracked (health is advisory and must not
 * block lookups). */
bool vf_circuit_admit(vf_circuit_registry *r, const char *tenant, const char *provider,
                      const char *host, uint64_t now_ms, vf_circuit_ticket *ticket,
                      vf_circuit_decision *why);

/* A ticket for an attempt that was not health-gated (static/domain/cost
 * strategies): its outcome still feeds the circuit, and after the cooldown
 * it may settle an open circuit the way a probe would. Takes no lock. */
void vf_circuit_ticket_observe(vf_circuit_ticket *ticket, const char *tenant, const char *provider,
                               const char *host);

/* Report an attempt. latency_ms < 0 = unknown (no EWMA sample). Consumes the ticket. */
void vf_circuit_record(vf_circuit_registry *r, vf_circuit_ticket *ticket, vf_health_outcome outcome,
                       int64_t latency_ms, uint64_t now_ms);

/* The ticket's attempt never happened: give back any probe slot it holds. */
void vf_circuit_release(vf_circuit_registry *r, vf_circuit_ticket *ticket);

typedef struct {
    vf_circuit_state state;
    unsigned consecutive_failures;
    unsigned window_samples;
    unsigned window_failures;
    uint64_t cooldown_left_ms;  /* open only; 0 once a probe may go */
    bool probe_in_flight;
    bool has_latency;           /* provider-wide only */
    double ewma_latency_ms;
    size_t tracked_hosts;       /* provider-wide only */
} vf_circuit_snapshot;

/* host NULL = the provider-wide circuit. false when never seen; *out then
 * describes a fresh closed circuit. */
bool vf_circuit_snapshot_get(vf_circuit_registry *r, const char *tenant, const char *provider,
                             const char *host, uint64_t now_ms, vf_circuit_snapshot *out);

/* Optional fleet-wide health (broker/fleet/shared_circuit.h), consulted after
 * the local circuits admit and fed every recorded outcome, so one pod's
 * failures open the circuit for all and half-open allows one probe fleet-wide.
 * host is the normalised host or NULL. admit: 1 admitted (*probe_mask as in
 * vf_circuit_ticket.shared_probe), 0 refused (*retry_in_ms, 0 = a probe is in
 * flight), -1 store unavailable (local state alone decides). */
typedef struct {
    int (*admit)(void *ctx, const char *tenant, const char *provider, const char *host,
                 const vf_circuit_params *p, unsigned *probe_mask, uint64_t *retry_in_ms);
    void (*record)(void *ctx, const char *tenant, const char *provider, const char *host,
                   const vf_circuit_params *p, bool provider_failure, bool content_failure,
                   unsigned probe_mask);
    void (*release)(void *ctx, const char *tenant, const char *provider, const char *host,
                    unsigned probe_mask);
    void *ctx;
} vf_circuit_shared;

/* Set once at startup, before lookups run (NULL = local only). */
void vf_circuit_set_shared(vf_circuit_registry *r, const vf_circuit_shared *shared);

/* "closed", "open", "half_open" */
const char *vf_circuit_state_name(vf_circuit_state s);

#endif
