/* Provider order for one lookup, and a short human reason the receipt records.
 *
 * Strategies (per tenant):
 *  static  the configured order.
 *  domain  the first rule whose host pattern matches the request host gives the
 *          order (provider names); providers the rule does not name are appended
 *          in configured order, or dropped with drop_unlisted. No match: static.
 *  cost    cheapest cost_per_call first, ties keep configured order; with a
 *          budget, providers stop being added once the cumulative cost would
 *          exceed it.
 *  health  configured order (or fastest EWMA latency first with by_latency),
 *          skipping providers whose circuit refuses them (policy/circuit.h).
 * skip_unhealthy layers the health skipping onto static, domain and cost.
 *
 * Host patterns: "example.com" matches exactly that host; "*.example.com"
 * matches any host below it at any depth (a.example.com, a.b.example.com) but
 * NOT the apex example.com and not badexample.com: list the apex as its own
 * pattern when wanted. "*" alone matches every host. Matching ignores case and
 * one trailing dot on the host. */
#ifndef VERIFETCH_ORDERING_H
#define VERIFETCH_ORDERING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/circuit.h"
#include "policy/config.h"
#include "policy/host_pattern.h"
#include "policy/ordering_config.h"

#define VF_ORDER_MAX         32u   /* providers per tenant (the config's cap) */
#define VF_ORDER_REASON_MAX  384u



const char *vf_order_strategy_name(vf_order_strategy s);   /* "static", "domain", "cost", "health" */
int vf_order_strategy_parse(const char *name, vf_order_strategy *out);   /* 0 or -1 */

/* Config-load check: strategy known, patterns valid, rule provider names exist
 * among the tenant's providers and appear once per rule, budget >= 0.
 * 0 or -1 with err like "rules[1].providers[0]: unknown provider \"fetchr\"". */
int vf_order_config_validate(const vf_order_config *cfg, const vf_provider_config *providers,
                             size_t n_providers, char *err, size_t errlen);
void vf_order_config_free(vf_order_config *cfg);

typedef struct {
    const char *tenant;                   /* circuit key; borrowed */
    const vf_provider_config *providers;  /* the tenant's providers, configured order */
    size_t n_providers;                   /* <= VF_ORDER_MAX */
    const char *host;                     /* request URL host (NULL/empty: no rule matches) */
    const vf_order_config *cfg;           /* NULL = static */
    vf_circuit_registry *circuits;        /* required for health/skip_unhealthy; else optional */
    uint64_t now_ms;
    size_t limit;                         /* at most this many providers (the attempt budget); 0 = all */
} vf_order_input;

typedef struct {
    size_t n;
    size_t index[VF_ORDER_MAX];           /* into vf_order_input.providers */
    /* One per position when circuits were given: pass to vf_circuit_record after
     * that attempt; vf_order_release_unused gives back the rest. */
    vf_circuit_ticket ticket[VF_ORDER_MAX];
    bool has_tickets;
    char reason[VF_ORDER_REASON_MAX];     /* e.g. "domain rule '*.example.com'" */
} vf_order;

/* 0 on success (out->n may be 0: e.g. every circuit open, or a budget below
 * the cheapest provider; the reason says which). -1 on bad input (too many
 * providers, health without circuits); out->reason then says what. */
int vf_order_compute(const vf_order_input *in, vf_order *out);

/* After the lookup: release the probe slots of positions never attempted. */
void vf_order_release_unused(vf_order *order, vf_circuit_registry *circuits);

#endif
