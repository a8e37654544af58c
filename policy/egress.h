/* Egress policy: which resolved addresses and ports the broker may connect to.
 * Decided on the resolved address (never the name) before every connect and
 * every redirect hop, so DNS tricks and odd IP spellings end up vetted too. */
#ifndef VERIFETCH_EGRESS_H
#define VERIFETCH_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct {
    int family;           /* AF_INET or AF_INET6 */
    uint8_t addr[16];     /* network byte order; first 4 bytes for AF_INET */
    unsigned prefix;      /* 0..32 or 0..128 */
} vf_cidr;

typedef struct {
    vf_cidr *allow;       /* ranges exempt from the default denials (e.g. 127.0.0.1/32 in tests) */
    size_t n_allow;
    vf_cidr *deny;        /* extra ranges denied on top of the defaults */
    size_t n_deny;
    uint16_t *ports;      /* allowed destination ports; NULL/0 means {80, 443} */
    size_t n_ports;
    bool any_port;        /* tests: origins listen on ephemeral ports */
    /* Addresses the broker itself listens on (never reachable through it).
     * Port 0 means every port of that address. Heap-owned once
     * vf_egress_add_self() or the config loader has touched it. */
    struct sockaddr_storage *self_addrs;
    size_t n_self;
    /* Host name patterns, stored lowercase without a trailing dot: "*.example.com"
     * (any subdomain, never the apex) or an exact name. See vf_host_pattern_match. */
    char **allow_hosts;   /* names whose addresses skip the default denials */
    size_t n_allow_hosts;
    char **deny_hosts;    /* names denied outright ("tenant_deny_host") */
    size_t n_deny_hosts;
} vf_egress_policy;

#define VF_HOST_NAME_MAX  253u   /* longest DNS name, without the trailing dot */
#define VF_EGRESS_SELF_MAX 64u   /* listener addresses one policy can hold */

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

/* Name-only part of the rules, usable before resolving: "tenant_deny_host"
 * when a deny_hosts pattern matches `host`, else NULL. */
const char *vf_egress_host_check(const vf_egress_policy *policy, const char *host);

/* True when an allow_hosts pattern matches `host` and no deny_hosts pattern does. */
bool vf_egress_host_allowed_explicitly(const vf_egress_policy *policy, const char *host);

/* Host pattern matching: case-insensitive (ASCII), one trailing dot on `host`
 * ignored. "*.example.com" matches a.example.com and a.b.example.com but not
 * example.com or badexample.com; any other pattern matches only itself.
 * `pattern` must be in the normalized form vf_host_pattern_parse produces. */
bool vf_host_pattern_match(const char *pattern, const char *host);

/* Validates and normalizes a configured pattern into out (lowercase, trailing
 * dot removed; outlen >= VF_HOST_NAME_MAX + 1). Returns NULL on success,
 * otherwise a static reason ("'*' is only allowed as a leading \"*.\" ..."). */
const char *vf_host_pattern_parse(const char *text, char *out, size_t outlen);

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
