/* tenants[i].ordering: the strategy, its rules and knobs, checked against the
 * tenant's providers by vf_order_config_validate (ordering.c). */
#include "policy/config_internal.h"
#include "policy/ordering.h"

#include <stdlib.h>
#include <string.h>

#define ORDER_WORD_MAX    16u         /* strategy, unlisted */
#define RULE_NAME_MAX     64u         /* a provider name in a rule (longer never matches) */
#define RULE_PATTERN_MAX  (VF_CIRCUIT_HOST_MAX + 2u)   /* "*." + a full host name */

static const char *const ordering_members[] = {
    "strategy", "skip_unhealthy", "rules", "unlisted", "budget", "by_latency", NULL,
};
static const char *const rule_members[] = { "match", "providers", NULL };

/* An array of at most max strings of at most max_len bytes, copied into *out. */
static int parse_strings(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                         unsigned max, size_t max_len, char ***out, size_t *n_out)
{
    int n;
    if (vf_cfg_want_seq(ctx, s, where, max, &n) != 0)
        return -1;
    *out = calloc((size_t)n + 1, sizeof **out);
    if (!*out)
        return vf_cfg_fail(ctx, s, where, "out of memory");
    for (int i = 0; i < n; i++) {
        const config_setting_t *elem = config_setting_get_elem(s, (unsigned)i);
        char path[VF_CFG_PATH_MAX];
        const char *text;
        vf_cfg_index(path, where, i);
        if (vf_cfg_get_string(ctx, elem, path, max_len, &text) != 0)
            return -1;
        (*out)[i] = strdup(text);
        if (!(*out)[i])
            return vf_cfg_fail(ctx, elem, path, "out of memory");
        *n_out = (size_t)i + 1;
    }
    return 0;
}

/* { match = [ patterns ]; providers = [ names ]; }. Pattern syntax and the
 * names themselves are judged by vf_order_config_validate. */
static int parse_rule(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                      vf_domain_rule *rule)
{
    if (vf_cfg_want_group(ctx, s, where) != 0 ||
        vf_cfg_check_members(ctx, s, where, rule_members) != 0)
        return -1;
    char path[VF_CFG_PATH_MAX];
    const config_setting_t *at = config_setting_get_member(s, "match");
    vf_cfg_join(path, where, "match");
    if (!at)
        return vf_cfg_fail(ctx, s, path, "missing (a rule needs match and providers)");
    if (parse_strings(ctx, at, path, VF_ORDER_MAX_PATTERNS, RULE_PATTERN_MAX, &rule->patterns,
                      &rule->n_patterns) != 0)
        return -1;
    at = config_setting_get_member(s, "providers");
    vf_cfg_join(path, where, "providers");
    if (!at)
        return vf_cfg_fail(ctx, s, path, "missing (a rule needs match and providers)");
    return parse_strings(ctx, at, path, VF_ORDER_MAX, RULE_NAME_MAX, &rule->providers,
                         &rule->n_providers);
}

static int parse_rules(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                       vf_order_config *o)
{
    int n;
    if (vf_cfg_want_seq(ctx, s, where, VF_ORDER_MAX_RULES, &n) != 0)
        return -1;
    o->rules = calloc((size_t)n + 1, sizeof *o->rules);
    if (!o->rules)
        return vf_cfg_fail(ctx, s, where, "out of memory");
    for (int i = 0; i < n; i++) {
        char path[VF_CFG_PATH_MAX];
        vf_cfg_index(path, where, i);
        /* Counted first so a half-parsed rule is freed with the rest. */
        o->n_rules = (size_t)i + 1;
        if (parse_rule(ctx, config_setting_get_elem(s, (unsigned)i), path, &o->rules[i]) != 0)
            return -1;
    }
    return 0;
}

/* Settings one strategy reads. Under another strategy they would be ignored,
 * so naming them is a mistake even at their default values. */
static int check_strategy_only(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                               vf_order_strategy strategy)
{
    static const struct {
        const char *name;
        vf_order_strategy strategy;
    } only[] = {
        { "rules", VF_ORDER_DOMAIN },
        { "unlisted", VF_ORDER_DOMAIN },
        { "budget", VF_ORDER_COST },
        { "by_latency", VF_ORDER_HEALTH },
    };
    for (size_t i = 0; i < sizeof only / sizeof only[0]; i++) {
        const config_setting_t *at = config_setting_get_member(s, only[i].name);
        if (!at || only[i].strategy == strategy)
            continue;
        char path[VF_CFG_PATH_MAX];
        vf_cfg_join(path, where, only[i].name);
        return vf_cfg_fail(ctx, at, path, "only used with strategy \"%s\" (this one is \"%s\")",
                           vf_order_strategy_name(only[i].strategy),
                           vf_order_strategy_name(strategy));
    }
    return 0;
}

int vf_cfg_parse_ordering(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                          vf_tenant_config *t)
{
    vf_order_config *o = &t->ordering;
    if (vf_cfg_want_group(ctx, s, where) != 0 ||
        vf_cfg_check_members(ctx, s, where, ordering_members) != 0)
        return -1;
    char path[VF_CFG_PATH_MAX];
    const config_setting_t *at;
    const char *word;
    if ((at = config_setting_get_member(s, "strategy"))) {
        vf_cfg_join(path, where, "strategy");
        if (vf_cfg_get_string(ctx, at, path, ORDER_WORD_MAX, &word) != 0)
            return -1;
        if (vf_order_strategy_parse(word, &o->strategy) != 0)
            return vf_cfg_fail(ctx, at, path,
                               "\"%s\" is not a strategy (\"static\", \"domain\", \"cost\" or \"health\")",
                               word);
    }
    if (check_strategy_only(ctx, s, where, o->strategy) != 0)
        return -1;
    if ((at = config_setting_get_member(s, "skip_unhealthy"))) {
        vf_cfg_join(path, where, "skip_unhealthy");
        if (vf_cfg_get_bool(ctx, at, path, &o->skip_unhealthy) != 0)
            return -1;
        if (o->strategy == VF_ORDER_HEALTH && !o->skip_unhealthy)
            return vf_cfg_fail(ctx, at, path,
                               "strategy \"health\" always skips providers whose circuit is open; "
                               "remove this line or pick another strategy");
    }
    if ((at = config_setting_get_member(s, "rules"))) {
        vf_cfg_join(path, where, "rules");
        if (parse_rules(ctx, at, path, o) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "unlisted"))) {
        vf_cfg_join(path, where, "unlisted");
        if (vf_cfg_get_string(ctx, at, path, ORDER_WORD_MAX, &word) != 0)
            return -1;
        if (strcmp(word, "append") != 0 && strcmp(word, "drop") != 0)
            return vf_cfg_fail(ctx, at, path, "must be \"append\" or \"drop\"");
        o->drop_unlisted = strcmp(word, "drop") == 0;
    }
    if ((at = config_setting_get_member(s, "budget"))) {
        vf_cfg_join(path, where, "budget");
        if (vf_cfg_get_number(ctx, at, path, 0.0, VF_CFG_COST_MAX, &o->budget) != 0)
            return -1;
        o->has_budget = true;
    }
    if ((at = config_setting_get_member(s, "by_latency"))) {
        vf_cfg_join(path, where, "by_latency");
        if (vf_cfg_get_bool(ctx, at, path, &o->by_latency) != 0)
            return -1;
    }
    char why[512];
    if (vf_order_config_validate(o, t->providers, t->n_providers, why, sizeof why) != 0)
        return vf_cfg_fail_relative(ctx, s, where, why, "");
    return 0;
}
