/* Egress policy: CIDR parsing/matching and the ordered SSRF rules. */
#include "policy/egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest text we accept: a full IPv6 spelling plus "/128". */
#define CIDR_TEXT_MAX (INET6_ADDRSTRLEN + 4)

static unsigned family_bits(int family)
{
    return family == AF_INET ? 32u : 128u;
}

/* Does the address `addr` (family width) start with the first `prefix` bits of `net`? */
static bool prefix_matches(const uint8_t *net, unsigned prefix, const uint8_t *addr)
{
    unsigned full = prefix / 8, rest = prefix % 8;
    if (memcmp(net, addr, full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xffu << (8 - rest));
    return (net[full] & mask) == (addr[full] & mask);
}

/* True when any bit past `prefix` is set: "10.0.0.1/8" is a typo, not a range. */
static bool host_bits_set(const uint8_t *addr, unsigned prefix, unsigned bits)
{
    for (unsigned bit = prefix; bit < bits; bit++)
        if (addr[bit / 8] & (0x80u >> (bit % 8)))
            return true;
    return false;
}

int vf_cidr_parse(const char *text, vf_cidr *out)
{
    if (!text || !out)
        return -1;
    size_t n = strlen(text);
    if (n == 0 || n >= CIDR_TEXT_MAX)
        return -1;

    char addr_text[CIDR_TEXT_MAX];
    memcpy(addr_text, text, n + 1);
    char *slash = strchr(addr_text, '/');
    const char *prefix_text = NULL;
    if (slash) {
        *slash = '\0';
        prefix_text = slash + 1;
    }

    vf_cidr c;
    memset(&c, 0, sizeof c);
    if (inet_pton(AF_INET, addr_text, c.addr) == 1)
        c.family = AF_INET;
    else if (inet_pton(AF_INET6, addr_text, c.addr) == 1)
        c.family = AF_INET6;
    else
        return -1;

    unsigned bits = family_bits(c.family);
    c.prefix = bits;
    if (prefix_text) {
        /* Plain decimal only: no sign, no spaces, no leading zeros, at most 3 digits. */
        size_t digits = strlen(prefix_text);
        if (digits == 0 || digits > 3 || (digits > 1 && prefix_text[0] == '0'))
            return -1;
        unsigned value = 0;
        for (size_t i = 0; i < digits; i++) {
            if (prefix_text[i] < '0' || prefix_text[i] > '9')
                return -1;
            value = value * 10 + (unsigned)(prefix_text[i] - '0');
        }
        if (value > bits)
            return -1;
        c.prefix = value;
    }
    if (host_bits_set(c.addr, c.prefix, bits))
        return -1;
    *out = c;
    return 0;
}

/* Copies the address bytes of sa; returns its family or 0 if unsupported. */
static int sockaddr_bytes(const struct sockaddr *sa, uint8_t out[16], uint16_t *port)
{
    if (!sa)
        return 0;
    if (sa->sa_family == AF_INET) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof in);
        memset(out, 0, 16);
        memcpy(out, &in.sin_addr, 4);
        if (port)
            *port = ntohs(in.sin_port);
        return AF_INET;
    }
    if (sa->sa_family == AF_INET6) {
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof in6);
        memcpy(out, &in6.sin6_addr, 16);
        if (port)
            *port = ntohs(in6.sin6_port);
        return AF_INET6;
    }
    return 0;
}

bool vf_cidr_contains(const vf_cidr *range, const struct sockaddr *sa)
{
    uint8_t addr[16];
    int family = sockaddr_bytes(sa, addr, NULL);
    if (!range || family == 0 || family != range->family)
        return false;
    if (range->prefix > family_bits(family))
        return false;
    return prefix_matches(range->addr, range->prefix, addr);
}

/* ---- the built-in special-purpose ranges ---- */

typedef struct {
    int family;
    uint8_t net[16];
    unsigned prefix;
    const char *rule;
} special_range;

/* First match wins, so 255.255.255.255 sits before 240/4. */
static const special_range default_denials[] = {
    { AF_INET, { 0 }, 8, "unspecified" },
    { AF_INET, { 127 }, 8, "loopback" },
    { AF_INET, { 10 }, 8, "rfc1918" },
    { AF_INET, { 172, 16 }, 12, "rfc1918" },
    { AF_INET, { 192, 168 }, 16, "rfc1918" },
    { AF_INET, { 169, 254 }, 16, "link_local" },
    { AF_INET, { 100, 64 }, 10, "cgnat" },
    { AF_INET, { 224 }, 4, "multicast" },
    { AF_INET, { 255, 255, 255, 255 }, 32, "broadcast" },
    { AF_INET, { 240 }, 4, "reserved" },
    { AF_INET, { 192, 0, 0 }, 24, "reserved" },
    { AF_INET, { 192, 88, 99 }, 24, "reserved" },      /* deprecated 6to4 relay anycast */
    { AF_INET, { 198, 18 }, 15, "benchmarking" },
    { AF_INET, { 192, 0, 2 }, 24, "documentation" },
    { AF_INET, { 198, 51, 100 }, 24, "documentation" },
    { AF_INET, { 203, 0, 113 }, 24, "documentation" },

    { AF_INET6, { 0 }, 128, "unspecified" },
    { AF_INET6, { [15] = 1 }, 128, "loopback" },
    { AF_INET6, { 0xfe, 0x80 }, 10, "link_local" },
    { AF_INET6, { 0xfc }, 7, "ula" },
    { AF_INET6, { 0xff }, 8, "multicast" },
    { AF_INET6, { 0x20, 0x01, 0x0d, 0xb8 }, 32, "documentation" },
    { AF_INET6, { 0x3f, 0xff }, 20, "documentation" },   /* RFC 9637 */
    { AF_INET6, { 0x20, 0x01, 0x00, 0x02, 0x00, 0x00 }, 48, "benchmarking" },
    { AF_INET6, { 0x20, 0x01, 0x00, 0x10 }, 28, "reserved" },  /* ORCHID */
    { AF_INET6, { 0x20, 0x01, 0x00, 0x20 }, 28, "reserved" },  /* ORCHIDv2 */
};

/* IPv6 forms that carry an IPv4 address a stack or gateway may route to. */
typedef struct {
    uint8_t net[16];
    unsigned prefix;
    const char *kind;
    int v4_offset;          /* where the IPv4 address sits, -1 when not fixed */
    bool v4_inverted;       /* Teredo stores the client address bit-flipped */
} embedded_range;

static const embedded_range embedded_forms[] = {
    { { [10] = 0xff, [11] = 0xff }, 96, "IPv4-mapped", 12, false },
    { { [8] = 0xff, [9] = 0xff }, 96, "IPv4-translated", 12, false },
    { { 0x00, 0x64, 0xff, 0x9b }, 96, "NAT64", 12, false },
    { { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, "local-use NAT64", -1, false },
    { { 0x20, 0x02 }, 16, "6to4", 2, false },
    { { 0x20, 0x01, 0x00, 0x00 }, 32, "Teredo", 12, true },
    { { 0 }, 96, "IPv4-compatible", 12, false },
};

static const embedded_range *find_embedded(const uint8_t addr[16])
{
    static const uint8_t zero[16];
    for (size_t i = 0; i < sizeof embedded_forms / sizeof embedded_forms[0]; i++) {
        const embedded_range *e = &embedded_forms[i];
        if (!prefix_matches(e->net, e->prefix, addr))
            continue;
        /* :: and ::1 are the unspecified and loopback addresses, not embeddings. */
        if (e->prefix == 96 && memcmp(e->net, zero, 16) == 0 &&
            memcmp(addr, zero, 15) == 0 && addr[15] <= 1)
            return NULL;
        return e;
    }
    return NULL;
}

static const special_range *find_default_denial(int family, const uint8_t addr[16])
{
    for (size_t i = 0; i < sizeof default_denials / sizeof default_denials[0]; i++) {
        const special_range *r = &default_denials[i];
        if (r->family == family && prefix_matches(r->net, r->prefix, addr))
            return r;
    }
    return NULL;
}

static bool port_allowed(const vf_egress_policy *p, uint16_t port)
{
    if (p->any_port)
        return port != 0;
    if (p->n_ports == 0 || !p->ports)
        return port == 80 || port == 443;
    for (size_t i = 0; i < p->n_ports; i++)
        if (p->ports[i] == port && port != 0)
            return true;
    return false;
}

static bool is_unspecified(int family, const uint8_t addr[16])
{
    static const uint8_t zero[16];
    return memcmp(addr, zero, family == AF_INET ? 4 : 16) == 0;
}

static bool is_broker_self(const vf_egress_policy *p, int family, const uint8_t addr[16],
                           uint16_t port)
{
    /* connect() to 0.0.0.0 or :: lands on a local address, so it reaches a
     * listener of that family on the same port whatever it is bound to. */
    bool unspecified = is_unspecified(family, addr);
    for (size_t i = 0; i < p->n_self && p->self_addrs; i++) {
        uint8_t self[16];
        uint16_t self_port = 0;
        int self_family = sockaddr_bytes((const struct sockaddr *)&p->self_addrs[i], self,
                                         &self_port);
        if (self_family != family)
            continue;
        if (!unspecified && memcmp(self, addr, family == AF_INET ? 4 : 16) != 0)
            continue;
        if (self_port == 0 || self_port == port)
            return true;
    }
    return false;
}

int vf_egress_add_self(vf_egress_policy *policy, const struct sockaddr *sa)
{
    if (!policy || !sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) {
        errno = EINVAL;
        return -1;
    }
    struct sockaddr_storage entry;
    memset(&entry, 0, sizeof entry);
    memcpy(&entry, sa, sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
                                                : sizeof(struct sockaddr_in6));
    uint8_t addr[16];
    uint16_t port = 0;
    int family = sockaddr_bytes(sa, addr, &port);
    for (size_t i = 0; i < policy->n_self && policy->self_addrs; i++) {
        uint8_t have[16];
        uint16_t have_port = 0;
        if (sockaddr_bytes((const struct sockaddr *)&policy->self_addrs[i], have, &have_port) ==
                family &&
            have_port == port && memcmp(have, addr, family == AF_INET ? 4 : 16) == 0)
            return 0;
    }
    if (policy->n_self >= VF_EGRESS_SELF_MAX) {
        errno = ENOSPC;
        return -1;
    }
    struct sockaddr_storage *grown =
        realloc(policy->self_addrs, (policy->n_self + 1) * sizeof *grown);
    if (!grown) {
        errno = ENOMEM;
        return -1;
    }
    grown[policy->n_self] = entry;
    policy->self_addrs = grown;
    policy->n_self++;
    return 0;
}

static bool in_list(const vf_cidr *list, size_t n, const struct sockaddr *sa)
{
    for (size_t i = 0; i < n && list; i++)
        if (vf_cidr_contains(&list[i], sa))
            return true;
    return false;
}

/* The address rules; `host_allowed` is an allow_hosts match for the name sa
 * was resolved from, which lifts only the default special-purpose denials. */
static const char *check_address(const vf_egress_policy *p, const struct sockaddr *sa,
                                 bool host_allowed)
{
    uint8_t addr[16];
    uint16_t port = 0;
    int family = sockaddr_bytes(sa, addr, &port);
    if (family == 0)
        return sa ? "reserved" : "unspecified";

    if (in_list(p->deny, p->n_deny, sa))
        return "tenant_deny";
    if (is_broker_self(p, family, addr, port))
        return "broker_self";
    if (!port_allowed(p, port))
        return "port";
    if (family == AF_INET6 && find_embedded(addr))
        return "ipv4_embedded_ipv6";
    if (in_list(p->allow, p->n_allow, sa) || host_allowed)
        return NULL;

    const special_range *r = find_default_denial(family, addr);
    if (r)
        return r->rule;
    /* Outside 2000::/3 nothing is allocated as global unicast. */
    if (family == AF_INET6 && (addr[0] & 0xe0) != 0x20)
        return "reserved";
    return NULL;
}

static const vf_egress_policy empty_policy;

const char *vf_egress_check(const vf_egress_policy *policy, const struct sockaddr *sa)
{
    return check_address(policy ? policy : &empty_policy, sa, false);
}

const char *vf_egress_check_host(const vf_egress_policy *policy, const char *host,
                                 const struct sockaddr *sa)
{
    const vf_egress_policy *p = policy ? policy : &empty_policy;
    const char *rule = vf_egress_host_check(p, host);
    if (rule)
        return rule;
    return check_address(p, sa, vf_egress_host_allowed_explicitly(p, host));
}

/* ---- human-readable denial lines ---- */

static void format_addr(const struct sockaddr *sa, char *out, size_t len)
{
    uint8_t addr[16];
    int family = sockaddr_bytes(sa, addr, NULL);
    if (family == 0 || !inet_ntop(family, addr, out, (socklen_t)len))
        snprintf(out, len, "%s", sa ? "(non-IP address)" : "(no address)");
}

static const char *rule_phrase(const char *rule)
{
    static const struct { const char *rule, *phrase; } phrases[] = {
        { "tenant_deny", "is in a range this tenant denies" },
        { "tenant_deny_host", "belongs to a host name this tenant denies" },
        { "broker_self", "is the broker's own listener" },
        { "unspecified", "is the unspecified address" },
        { "loopback", "is a loopback address" },
        { "rfc1918", "is in a private range" },
        { "link_local", "is link-local" },
        { "cgnat", "is in the carrier-grade NAT range (100.64.0.0/10)" },
        { "ula", "is an IPv6 unique local address" },
        { "multicast", "is a multicast address" },
        { "broadcast", "is the broadcast address" },
        { "reserved", "is in a reserved range" },
        { "benchmarking", "is in a benchmarking range" },
        { "documentation", "is in a documentation range" },
    };
    for (size_t i = 0; i < sizeof phrases / sizeof phrases[0]; i++)
        if (strcmp(phrases[i].rule, rule) == 0)
            return phrases[i].phrase;
    return "is not allowed";
}

static void describe_embedded(const struct sockaddr *sa, const char *addr_text, char *buf,
                              size_t len)
{
    uint8_t addr[16];
    const embedded_range *e = NULL;
    if (sockaddr_bytes(sa, addr, NULL) == AF_INET6)
        e = find_embedded(addr);
    if (!e) {
        snprintf(buf, len, "egress denied: %s embeds an IPv4 address (rule ipv4_embedded_ipv6)",
                 addr_text);
        return;
    }
    if (e->v4_offset < 0) {
        snprintf(buf, len, "egress denied: %s embeds an IPv4 address (%s) (rule ipv4_embedded_ipv6)",
                 addr_text, e->kind);
        return;
    }
    uint8_t v4[4];
    for (int i = 0; i < 4; i++)
        v4[i] = (uint8_t)(e->v4_inverted ? ~addr[e->v4_offset + i] : addr[e->v4_offset + i]);
    char v4_text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, v4, v4_text, sizeof v4_text);
    snprintf(buf, len, "egress denied: %s embeds IPv4 %s (%s) (rule ipv4_embedded_ipv6)",
             addr_text, v4_text, e->kind);
}

void vf_egress_describe(const char *rule, const struct sockaddr *sa, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    char addr_text[INET6_ADDRSTRLEN];
    format_addr(sa, addr_text, sizeof addr_text);
    uint8_t addr[16];
    uint16_t port = 0;
    int family = sockaddr_bytes(sa, addr, &port);

    if (!rule) {
        snprintf(buf, len, "egress allowed: %s port %u", addr_text, (unsigned)port);
    } else if (strcmp(rule, "port") == 0) {
        snprintf(buf, len, "egress denied: %s port %u is not an allowed destination port (rule port)",
                 addr_text, (unsigned)port);
    } else if (strcmp(rule, "broker_self") == 0) {
        snprintf(buf, len, "egress denied: %s port %u is the broker's own listener (rule broker_self)",
                 addr_text, (unsigned)port);
    } else if (strcmp(rule, "ipv4_embedded_ipv6") == 0) {
        describe_embedded(sa, addr_text, buf, len);
    } else if (strcmp(rule, "link_local") == 0 && family == AF_INET &&
               addr[0] == 169 && addr[1] == 254) {
        /* The whole range is where clouds put their metadata services. */
        snprintf(buf, len, "egress denied: %s is link-local (cloud metadata) (rule link_local)",
                 addr_text);
    } else {
        snprintf(buf, len, "egress denied: %s %s (rule %s)", addr_text, rule_phrase(rule), rule);
    }
}

void vf_egress_describe_host(const char *rule, const char *host, const struct sockaddr *sa,
                             char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    if (!rule || strcmp(rule, "tenant_deny_host") != 0 || !host) {
        vf_egress_describe(rule, sa, buf, len);
        return;
    }
    /* The host comes from a URL an attacker may write: print a safe copy. */
    char safe[VF_HOST_NAME_MAX + 2];
    vf_host_printable(host, safe, sizeof safe);
    snprintf(buf, len, "egress denied: host %s is denied for this tenant (rule tenant_deny_host)",
             safe);
}

void vf_egress_policy_free(vf_egress_policy *policy)
{
    if (!policy)
        return;
    free(policy->allow);
    free(policy->deny);
    free(policy->ports);
    free(policy->self_addrs);
    for (size_t i = 0; i < policy->n_allow_hosts && policy->allow_hosts; i++)
        free(policy->allow_hosts[i]);
    free(policy->allow_hosts);
    for (size_t i = 0; i < policy->n_deny_hosts && policy->deny_hosts; i++)
        free(policy->deny_hosts[i]);
    free(policy->deny_hosts);
    memset(policy, 0, sizeof *policy);
}
