/* Egress host name rules: the name-only checks against a policy's allow_hosts
 * and deny_hosts (patterns are parsed and matched in host_pattern.c). Names are
 * a convenience on top of the address rules in egress.c: a deny by name is
 * bypassable with another name or an IP literal, so the CIDR rules stay the
 * real boundary. */
#include "policy/egress_host.h"

#include "policy/host_pattern.h"

static bool any_match(char *const *patterns, size_t n, const char *host)
{
    /* No early exit needed: these are policy names, not secrets. */
    for (size_t i = 0; i < n && patterns; i++)
        if (vf_host_pattern_match(patterns[i], host))
            return true;
    return false;
}

const char *vf_egress_host_check(const vf_egress_policy *policy, const char *host)
{
    if (!policy || !host)
        return NULL;
    return any_match(policy->deny_hosts, policy->n_deny_hosts, host) ? "tenant_deny_host" : NULL;
}

bool vf_egress_host_allowed_explicitly(const vf_egress_policy *policy, const char *host)
{
    if (!policy || !host || vf_egress_host_check(policy, host))
        return false;
    return any_match(policy->allow_hosts, policy->n_allow_hosts, host);
}
