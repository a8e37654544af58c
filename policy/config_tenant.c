/* One entry of tenants: identity, limits, quotas, egress policy, providers and
 * their circuit breaker. The ordering group is parsed in config_ordering.c. */
#include "policy/config_internal.h"
#include "policy/ordering.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROVIDERS 32u
#define MAX_PORTS     64u
#define MAX_UID       4294967294LL    /* (uid_t)-1 means "no uid" to the kernel */
#define CIRCUIT_MS_MAX    86400000LL  /* a day: a longer cooldown or lease is a typo */

_Static_assert(MAX_PROVIDERS <= VF_ORDER_MAX, "ordering must handle every configured provider");

static const char *const tenant_members[] = {
    "name", "uids", "tokens", "attempt_ceiling", "timeout_ms", "max_body_bytes", "quota", "egress",
    "providers", "ordering", "circuit", "classify", "cache", "user_agent", "robots", "robots_ttl_s", NULL,
};
static const char *const circuit_members[] = {
    "failure_threshold", "window", "min_samples", "failure_rate", "cooldown_ms",
    "probe_lease_ms", "ewma_alpha", "max_domains", NULL,
};
static const char *const egress_members[] = {
    "allow", "deny", "allow_hosts", "deny_hosts", "ports", "any_port", NULL,
};
static const char *const quota_members[] = { "concurrent", "requests_per_minute", NULL };

/* Reads an optional integer member within [min, max] into *out (left alone when absent). */
static int limit_member(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                        const char *name, long long min, long long max, long long *out)
{
    const config_setting_t *at = config_setting_get_member(s, name);
    char path[VF_CFG_PATH_MAX];
    vf_cfg_join(path, where, name);
    return at ? vf_cfg_get_int(ctx, at, path, min, max, out) : 0;
}

/* Host name patterns. In allow_hosts a glob must name at least a second-level
 * domain: "*.com" would lift the default denials for every .com name. */
static int parse_hosts(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                       bool allow, char ***out, size_t *n_out)
{
    int n;
    if (vf_cfg_want_seq(ctx, s, where, VF_CFG_LIST_MAX, &n) != 0)
        return -1;
    *out = calloc((size_t)n + 1, sizeof **out);
    if (!*out)
        return vf_cfg_fail(ctx, s, where, "out of memory");
    for (int i = 0; i < n; i++) {
        const config_setting_t *elem = config_setting_get_elem(s, (unsigned)i);
        char path[VF_CFG_PATH_MAX], pattern[VF_HOST_NAME_MAX + 1];
        const char *text;
        vf_cfg_index(path, where, i);
        if (vf_cfg_get_string(ctx, elem, path, VF_HOST_NAME_MAX + 3, &text) != 0)
            return -1;
        const char *why = vf_host_pattern_parse(text, pattern, sizeof pattern);
        if (why)
            return vf_cfg_fail(ctx, elem, path, "\"%s\" %s", text, why);
        if (allow && pattern[0] == '*' && !strchr(pattern + 2, '.'))
            return vf_cfg_fail(ctx, elem, path,
                               "\"%s\" would exempt every name under a top-level domain from the "
                               "default denials; name the domain (\"*.internal.example\")", text);
        (*out)[i] = strdup(pattern);
        if (!(*out)[i])
            return vf_cfg_fail(ctx, elem, path, "out of memory");
        *n_out = (size_t)i + 1;
    }
    return 0;
}

static int parse_quota(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                       vf_tenant_config *t)
{
    if (vf_cfg_want_group(ctx, s, where) != 0 ||
        vf_cfg_check_members(ctx, s, where, quota_members) != 0)
        return -1;
    long long concurrent = 0, rpm = 0;
    if (limit_member(ctx, s, where, "concurrent", 0, VF_QUOTA_MAX, &concurrent) != 0 ||
        limit_member(ctx, s, where, "requests_per_minute", 0, VF_QUOTA_MAX, &rpm) != 0)
        return -1;
    t->quota_concurrent = (unsigned)concurrent;
    t->quota_concurrent_set = config_setting_get_member(s, "concurrent") != NULL;
    t->quota_rpm = (unsigned)rpm;
    return 0;
}

static int parse_cidrs(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                       vf_cidr **out, size_t *n_out)
{
    int n;
    if (vf_cfg_want_seq(ctx, s, where, VF_CFG_LIST_MAX, &n) != 0)
        return -1;
    *out = calloc((size_t)n + 1, sizeof **out);
    if (!*out)
        return vf_cfg_fail(ctx, s, where, "out of memory");
    for (int i = 0; i < n; i++) {
        const config_setting_t *elem = config_setting_get_elem(s, (unsigned)i);
        char path[VF_CFG_PATH_MAX];
        const char *text;
        vf_cfg_index(path, where, i);
        if (vf_cfg_get_string(ctx, elem, path, 64, &text) != 0)
            return -1;
        if (vf_cidr_parse(text, &(*out)[i]) != 0)
            return vf_cfg_fail(ctx, elem, path,
                               "\"%s\" is not an IPv4/IPv6 address or CIDR without host bits "
                               "(e.g. \"10.0.0.0/8\", \"::1/128\")", text);
        *n_out = (size_t)i + 1;
    }
    return 0;
}

static int parse_ports(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                       vf_egress_policy *eg)
{
    int n;
    if (vf_cfg_want_seq(ctx, s, where, MAX_PORTS, &n) != 0)
        return -1;
    if (n == 0)
        return vf_cfg_fail(ctx, s, where, "must list at least one port (or set any_port = true)");
    eg->ports = calloc((size_t)n, sizeof *eg->ports);
    if (!eg->ports)
        return vf_cfg_fail(ctx, s, where, "out of memory");
    for (int i = 0; i < n; i++) {
        char path[VF_CFG_PATH_MAX];
        long long port;
        vf_cfg_index(path, where, i);
        if (vf_cfg_get_int(ctx, config_setting_get_elem(s, (unsigned)i), path, 1, 65535, &port) != 0)
            return -1;
        eg->ports[i] = (uint16_t)port;
        eg->n_ports = (size_t)i + 1;
    }
    return 0;
}

static int parse_egress(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                        vf_egress_policy *eg)
{
    if (vf_cfg_want_group(ctx, s, where) != 0 ||
        vf_cfg_check_members(ctx, s, where, egress_members) != 0)
        return -1;
    char path[VF_CFG_PATH_MAX];
    const config_setting_t *at;
    if ((at = config_setting_get_member(s, "allow"))) {
        vf_cfg_join(path, where, "allow");
        if (parse_cidrs(ctx, at, path, &eg->allow, &eg->n_allow) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "deny"))) {
        vf_cfg_join(path, where, "deny");
        if (parse_cidrs(ctx, at, path, &eg->deny, &eg->n_deny) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "allow_hosts"))) {
        vf_cfg_join(path, where, "allow_hosts");
        if (parse_hosts(ctx, at, path, true, &eg->allow_hosts, &eg->n_allow_hosts) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "deny_hosts"))) {
        vf_cfg_join(path, where, "deny_hosts");
        if (parse_hosts(ctx, at, path, false, &eg->deny_hosts, &eg->n_deny_hosts) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "ports"))) {
        vf_cfg_join(path, where, "ports");
        if (parse_ports(ctx, at, path, eg) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "any_port"))) {
        vf_cfg_join(path, where, "any_port");
        if (vf_cfg_get_bool(ctx, at, path, &eg->any_port) != 0)
            return -1;
    }
    return 0;
}

static int parse_uids(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                      vf_tenant_config *t)
{
    int n;
    if (vf_cfg_want_seq(ctx, s, where, VF_CFG_LIST_MAX, &n) != 0)
        return -1;
    t->uids = calloc((size_t)n + 1, sizeof *t->uids);
    if (!t->uids)
        return vf_cfg_fail(ctx, s, where, "out of memory");
    for (int i = 0; i < n; i++) {
        const config_setting_t *elem = config_setting_get_elem(s, (unsigned)i);
        char path[VF_CFG_PATH_MAX];
        long long uid;
        vf_cfg_index(path, where, i);
        if (vf_cfg_get_int(ctx, elem, path, 0, MAX_UID, &uid) != 0)
            return -1;
        for (int k = 0; k < i; k++)
            if (t->uids[k] == (uid_t)uid)
                return vf_cfg_fail(ctx, elem, path, "uid %lld is listed twice", uid);
        t->uids[i] = (uid_t)uid;
        t->n_uids = (size_t)i + 1;
    }
    return 0;
}

static int parse_providers(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                           vf_tenant_config *t)
{
    int n;
    if (vf_cfg_want_seq(ctx, s, where, MAX_PROVIDERS, &n) != 0)
        return -1;
    t->providers = calloc((size_t)n + 1, sizeof *t->providers);
    if (!t->providers)
        return vf_cfg_fail(ctx, s, where, "out of memory");
    for (int i = 0; i < n; i++) {
        const config_setting_t *elem = config_setting_get_elem(s, (unsigned)i);
        char path[VF_CFG_PATH_MAX];
        vf_cfg_index(path, where, i);
        if (vf_cfg_want_group(ctx, elem, path) != 0)
            return -1;
        /* Count it first so a half-filled provider (maybe holding a key) is freed. */
        t->n_providers = (size_t)i + 1;
        if (vf_cfg_parse_provider(ctx, elem, path, &t->providers[i]) != 0)
            return -1;
        for (int k = 0; k < i; k++)
            if (strcmp(t->providers[k].name, t->providers[i].name) == 0) {
                char name_path[VF_CFG_PATH_MAX];
                vf_cfg_join(name_path, path, "name");
                return vf_cfg_fail(ctx, config_setting_get_member(elem, "name"), name_path,
                                   "duplicate provider name \"%s\" (also %s[%d])",
                                   t->providers[i].name, where, k);
            }
    }
    return 0;
}

static int default_direct_provider(vf_tenant_config *t)
{
    t->providers = calloc(1, sizeof *t->providers);
    if (!t->providers)
        return -1;
    t->n_providers = 1;
    t->providers[0].kind = VF_PROVIDER_DIRECT;
    t->providers[0].mode = VF_MODE_RAW;
    t->providers[0].name = strdup("direct");
    return t->providers[0].name ? 0 : -1;
}

static void set_default_limits(vf_tenant_config *t)
{
    t->attempt_ceiling = VF_DEFAULT_ATTEMPT_CEILING;
    t->timeout_ms = VF_DEFAULT_TIMEOUT_MS;
    t->max_body_bytes = VF_DEFAULT_MAX_BODY;
}

int vf_cfg_default_tenant(vf_tenant_config *out)
{
    memset(out, 0, sizeof *out);
    set_default_limits(out);
    out->name = strdup("default");
    if (!out->name || default_direct_provider(out) != 0) {
        vf_cfg_tenant_free(out);
        return -1;
    }
    return 0;
}

int vf_cfg_parse_tenant(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                        vf_tenant_config *out)
{
    memset(out, 0, sizeof *out);
    set_default_limits(out);
    if (vf_cfg_check_members(ctx, s, where, tenant_members) != 0)
        return -1;

    char path[VF_CFG_PATH_MAX];
    const config_setting_t *at = config_setting_get_member(s, "name");
    const char *name = "default";
    vf_cfg_join(path, where, "name");
    if (at && vf_cfg_get_string(ctx, at, path, VF_CFG_STRING_MAX, &name) != 0)
        return -1;
    if (!vf_cfg_valid_name(name))
        return vf_cfg_fail(ctx, at, path, "\"%.64s\" must be 1-32 characters of a-z, 0-9, '_', '-'",
                           name);
    out->name = strdup(name);
    if (!out->name)
        return vf_cfg_fail(ctx, s, where, "out of memory");

    if ((at = config_setting_get_member(s, "uids"))) {
        vf_cfg_join(path, where, "uids");
        if (parse_uids(ctx, at, path, out) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "tokens"))) {
        vf_cfg_join(path, where, "tokens");
        if (vf_cfg_parse_tokens(ctx, at, path, out) != 0)
            return -1;
    }

    long long ceiling = out->attempt_ceiling, timeout = out->timeout_ms;
    long long body = (long long)out->max_body_bytes;
    if (limit_member(ctx, s, where, "attempt_ceiling", 1, VF_MAX_ATTEMPT_CEILING, &ceiling) != 0 ||
        limit_member(ctx, s, where, "timeout_ms", 100, 600000, &timeout) != 0 ||
        limit_member(ctx, s, where, "max_body_bytes", 1024, 268435456, &body) != 0)
        return -1;
    out->attempt_ceiling = (unsigned)ceiling;
    out->timeout_ms = (unsigned)timeout;
    out->max_body_bytes = (uint64_t)body;

    if ((at = config_setting_get_member(s, "quota"))) {
        vf_cfg_join(path, where, "quota");
        if (parse_quota(ctx, at, path, out) != 0)
            return -1;
    }

    if (vf_cfg_parse_manners(ctx, s, where, out) != 0)
        return -1;

    if ((at = config_setting_get_member(s, "cache"))) {
        vf_cfg_join(path, where, "cache");
        if (vf_cfg_parse_cache(ctx, at, path, &out->cache) != 0)
            return -1;
    }

    if ((at = config_setting_get_member(s, "egress"))) {
        vf_cfg_join(path, where, "egress");
        if (parse_egress(ctx, at, path, &out->egress) != 0)
            return -1;
    }

    /* Absent means the built-in "direct"; an explicit empty list means none at all. */
    if ((at = config_setting_get_member(s, "providers"))) {
        vf_cfg_join(path, where, "providers");
        if (parse_providers(ctx, at, path, out) != 0)
            return -1;
    } else if (default_direct_provider(out) != 0) {
        return vf_cfg_fail(ctx, s, where, "out of memory");
    }

    /* After providers: ordering rules name them. */
    if ((at = config_setting_get_member(s, "ordering"))) {
        vf_cfg_join(path, where, "ordering");
        if (vf_cfg_parse_ordering(ctx, at, path, out) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "circuit"))) {
        vf_cfg_join(path, where, "circuit");
        if (vf_cfg_parse_circuit(ctx, at, path, out) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "classify"))) {
        vf_cfg_join(path, where, "classify");
        if (vf_cfg_parse_tenant_classify(ctx, at, path, out) != 0)
            return -1;
    }
    return 0;
}

/* ---- circuit ---- */

static int fraction_member(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                           const char *name, double *out)
{
    const config_setting_t *at = config_setting_get_member(s, name);
    char path[VF_CFG_PATH_MAX];
    vf_cfg_join(path, where, name);
    return at ? vf_cfg_get_number(ctx, at, path, 0.0, 1.0, out) : 0;
}

int vf_cfg_parse_circuit(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                         vf_tenant_config *t)
{
    if (vf_cfg_want_group(ctx, s, where) != 0 ||
        vf_cfg_check_members(ctx, s, where, circuit_members) != 0)
        return -1;
    vf_circuit_params p;
    vf_circuit_params_default(&p);
    long long threshold = p.failure_threshold, window = p.window, min_samples = p.min_samples;
    long long cooldown = (long long)p.cooldown_ms, lease = (long long)p.probe_lease_ms;
    long long domains = p.max_domains;
    /* Single-field ranges here; cross-field rules (min_samples <= window, one
     * rule on, ewma_alpha > 0) are the validator's. */
    if (limit_member(ctx, s, where, "failure_threshold", 0, INT32_MAX, &threshold) != 0 ||
        limit_member(ctx, s, where, "window", 1, VF_CIRCUIT_MAX_WINDOW, &window) != 0 ||
        limit_member(ctx, s, where, "min_samples", 1, VF_CIRCUIT_MAX_WINDOW, &min_samples) != 0 ||
        limit_member(ctx, s, where, "cooldown_ms", 1, CIRCUIT_MS_MAX, &cooldown) != 0 ||
        limit_member(ctx, s, where, "probe_lease_ms", 1, CIRCUIT_MS_MAX, &lease) != 0 ||
        limit_member(ctx, s, where, "max_domains", 1, VF_CIRCUIT_MAX_DOMAINS, &domains) != 0 ||
        fraction_member(ctx, s, where, "failure_rate", &p.failure_rate) != 0 ||
        fraction_member(ctx, s, where, "ewma_alpha", &p.ewma_alpha) != 0)
        return -1;
    p.failure_threshold = (unsigned)threshold;
    p.window = (unsigned)window;
    p.min_samples = (unsigned)min_samples;
    p.cooldown_ms = (uint64_t)cooldown;
    p.probe_lease_ms = (uint64_t)lease;
    p.max_domains = (unsigned)domains;
    char why[256];
    if (vf_circuit_params_validate(&p, why, sizeof why) != 0)
        return vf_cfg_fail_relative(ctx, s, where, why, " (not set here, so its default is used)");
    t->circuit = p;
    t->has_circuit = true;
    return 0;
}

bool vf_tenant_serves_any_peer(const vf_tenant_config *tenant)
{
    return tenant && tenant->n_uids == 0 && tenant->n_tokens == 0;
}

void vf_cfg_tenant_free(vf_tenant_config *t)
{
    if (!t)
        return;
    free(t->user_agent);
    free(t->name);
    free(t->uids);
    if (t->tokens)
        explicit_bzero(t->tokens, t->n_tokens * sizeof *t->tokens);
    free(t->tokens);
    for (size_t i = 0; i < t->n_providers && t->providers; i++)
        vf_cfg_provider_free(&t->providers[i]);
    free(t->providers);
    vf_order_config_free(&t->ordering);
    vf_egress_policy_free(&t->egress);
    vf_cache_config_free(&t->cache);
    memset(t, 0, sizeof *t);
}
