/* The egress policy one tenant carries (the rules are in egress.h): address
 * ranges, ports, the broker's own listeners and host name patterns. A header of
 * its own so the address rules (egress.c) and the name rules (egress_host.c)
 * share the type without including each other. */
#ifndef VERIFETCH_EGRESS_POLICY_H
#define VERIFETCH_EGRESS_POLICY_H

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

#define VF_EGRESS_SELF_MAX 64u   /* listener addresses one policy can hold */

#endif
