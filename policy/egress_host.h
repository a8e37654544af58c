/* The name-only part of the egress rules, usable before resolving
 * (egress_host.c). vf_egress_check_host (egress.h) combines them with the
 * address rules. */
#ifndef VERIFETCH_EGRESS_HOST_H
#define VERIFETCH_EGRESS_HOST_H

#include <stdbool.h>

#include "policy/egress_policy.h"

/* "tenant_deny_host" when a deny_hosts pattern matches `host`, else NULL. */
const char *vf_egress_host_check(const vf_egress_policy *policy, const char *host);

/* True when an allow_hosts pattern matches `host` and no deny_hosts pattern does. */
bool vf_egress_host_allowed_explicitly(const vf_egress_policy *policy, const char *host);

#endif
