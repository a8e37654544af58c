/* Egress policy: which resolved addresses and ports the broker may connect to.
 * Decided on the resolved address (never the name) before every connect and
 * every redirect hop, so DNS tricks and odd IP spellings end up vetted too. */
#ifndef VERIFETCH_EGRESS_H
#define VERIFETCH_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "policy/egress_host.h"
#include "policy/egress_policy.h"
#include "policy/host_pattern.h"

/* Parse "10.0.0.0/8", "::1/128", or a bare address (full-length prefix).
 * Returns 0 on success, -1 on a malformed string. Host bits beyond the prefix
 * are rejected (a typo, not a range). */
int vf_cidr_parse(const char *text, vf_cidr *out);
bool vf_cidr_contains(const vf_cidr *range, const struct sockaddr *sa);

/* NULL when the connection is allowed; otherwise a static rule name:
 *  "tenant_deny", "broker_self" (incl. 0.0.0.0 / :: on a listener's port),
 *  "port", "unspecified", "loopback", "rfc1918", "link_local" (incl.
 *  169.254.169.254 metadata), "cgnat", "ula", "multicast", "broadcast", "reserved",
 *  "ipv4_embedded_ipv6" (mapped, compatible, NAT64, 6to4, Teredo), "benchmarking", "documentation".
 * Order: tenant deny and broker-self first (allow cannot override them), then
 * port, then IPv4-embedded IPv6 (never allowed), then the allow list, then the
 * default special-purpose ranges. Host name rules are not applied here; a
 * caller that knows the URL host uses vf_egress_check_host. */
const char *vf_egress_check(const vf_egress_policy *policy, const struct sockaddr *sa);

/* The same rules for a connection to `sa` that was resolved from the URL host
 * `host` (NULL = no name, e.g. an IP literal: exactly vf_egress_check). Order:
 *  1. a deny_hosts match              -> "tenant_deny_host" (sa may be NULL here)
 *  2. tenant deny CIDRs, broker_self, port, ipv4_embedded_ipv6, allow CIDRs,
 *     as in vf_egress_check;
 *  3. an allow_hosts match (and no deny_hosts match) exempts the address from
 *     the default special-purpose denials (loopback, rfc1918, link_local, ...).
 * So an allowed name resolving to 10.0.0.1 connects, while a tenant deny CIDR,
 * the broker's own listener, a disallowed port or an IPv4-embedded IPv6
 * address still refuse it. Call it for every redirect hop with that hop's host. */
const char *vf_egress_check_host(const vf_egress_policy *policy, const char *host,
                                 const struct sockaddr *sa);

/* Registers an address the broker listens on (e.g. the TCP listener, after
 * bind(), so an ephemeral port is known) as "broker_self" for this policy.
 * AF_INET/AF_INET6 only; duplicates are ignored. A destination of 0.0.0.0 or
 * :: on a listener's port counts too: Linux connects those to a local address.
 * Returns 0, or -1 with errno EINVAL (bad family), ENOSPC (VF_EGRESS_SELF_MAX
 * reached) or ENOMEM. */
int vf_egress_add_self(vf_egress_policy *policy, const struct sockaddr *sa);

/* One human line for a receipt detail, e.g.
 * "egress denied: 10.0.0.1 is in a private range (rule rfc1918)". */
void vf_egress_describe(const char *rule, const struct sockaddr *sa, char *buf, size_t len);

/* Like vf_egress_describe, but "tenant_deny_host" names the host:
 * "egress denied: host metadata.google.internal is denied for this tenant
 * (rule tenant_deny_host)". The host is printed with bytes outside
 * [A-Za-z0-9.-_] replaced by '?' and cut at VF_HOST_NAME_MAX. */
void vf_egress_describe_host(const char *rule, const char *host, const struct sockaddr *sa,
                             char *buf, size_t len);

void vf_egress_policy_free(vf_egress_policy *policy);

#endif
