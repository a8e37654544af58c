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
    /* Addresses the broker itself listens on (never reachable through it). */
    struct sockaddr_storage *self_addrs;
    size_t n_self;
} vf_egress_policy;

/* Parse "10.0.0.0/8", "::1/128", or a bare address (full-length prefix).
 * Returns 0 on success, -1 on a malformed string. Host bits beyond the prefix
 * are rejected (a typo, not a range). */
int vf_cidr_parse(const char *text, vf_cidr *out);
bool vf_cidr_contains(const vf_cidr *range, const struct sockaddr *sa);

/* NULL when the connection is allowed; otherwise a static rule name:
 *  "tenant_deny", "broker_self", "port", "unspecified", "loopback", "rfc1918",
 *  "link_local" (incl. 169.254.169.254 metadata), "cgnat", "ula", "multicast",
 *  "broadcast", "reserved", "ipv4_embedded_ipv6" (mapped, compatible, NAT64,
 *  6to4, Teredo), "benchmarking", "documentation".
 * Order: tenant deny and broker-self first (allow cannot override them), then
 * port, then IPv4-embedded IPv6 (never allowed), then the allow list, then the
 * default special-purpose ranges. */
const char *vf_egress_check(const vf_egress_policy *policy, const struct sockaddr *sa);

/* One human line for a receipt detail, e.g.
 * "egress denied: 10.0.0.1 is in a private range (rule rfc1918)". */
void vf_egress_describe(const char *rule, const struct sockaddr *sa, char *buf, size_t len);

void vf_egress_policy_free(vf_egress_policy *policy);

#endif
