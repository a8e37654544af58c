/* How a tenant orders its providers: the configuration half of ordering.h,
 * split out so policy/config.h can embed it. */
#ifndef VERIFETCH_ORDERING_CONFIG_H
#define VERIFETCH_ORDERING_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define VF_ORDER_MAX_RULES   256u
#define VF_ORDER_MAX_PATTERNS 64u  /* per rule */

typedef enum { VF_ORDER_STATIC = 0, VF_ORDER_DOMAIN, VF_ORDER_COST, VF_ORDER_HEALTH } vf_order_strategy;

typedef struct {
    char **patterns;          /* host patterns; any one matching selects the rule */
    size_t n_patterns;
    char **providers;         /* provider names in the order to try them */
    size_t n_providers;
} vf_domain_rule;

/* All-zero = static. Owned by the tenant config (vf_order_config_free). */
typedef struct {
    vf_order_strategy strategy;
    vf_domain_rule *rules;    /* domain: first match wins */
    size_t n_rules;
    bool drop_unlisted;       /* domain: providers a matching rule does not name are dropped */
    bool has_budget;          /* cost: per-lookup budget in cost_per_call units */
    double budget;
    bool by_latency;          /* health: fastest EWMA latency first; unmeasured keep configured order after measured */
    bool skip_unhealthy;      /* static/domain/cost: also skip providers whose circuit refuses them */
} vf_order_config;

#endif
