/* Egress policy: CIDR parsing and matching, every default rule, rule order,
 * ports, the broker's own listener, and the one-line descriptions. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "policy/egress.h"

static struct sockaddr_storage addr_of(const char *ip, uint16_t port)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, ip, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
    } else {
        cr_assert_eq(inet_pton(AF_INET6, ip, &in6->sin6_addr), 1, "bad test address %s", ip);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
    }
    return ss;
}

static const char *check(const vf_egress_policy *p, const char *ip, uint16_t port)
{
    struct sockaddr_storage ss = addr_of(ip, port);
    return vf_egress_check(p, (const struct sockaddr *)&ss);
}

static vf_cidr cidr(const char *text)
{
    vf_cidr c;
    cr_assert_eq(vf_cidr_parse(text, &c), 0, "test CIDR %s should parse", text);
    return c;
}

static void assert_rule(const vf_egress_policy *p, const char *ip, uint16_t port,
                        const char *expected)
{
    const char *got = check(p, ip, port);
    if (!expected)
        cr_expect_null(got, "%s port %u: expected allowed, got rule %s", ip, port, got);
    else
        cr_expect(got && strcmp(got, expected) == 0, "%s port %u: expected %s, got %s", ip, port,
                  expected, got ? got : "(allowed)");
}

/* ---- vf_cidr_parse ---- */

Test(cidr, parses_ipv4_ipv6_and_bare_addresses)
{
    vf_cidr c = cidr("10.0.0.0/8");
    cr_assert_eq(c.family, AF_INET);
    cr_assert_eq(c.prefix, 8);
    cr_assert_eq(c.addr[0], 10);

    c = cidr("::1/128");
    cr_assert_eq(c.family, AF_INET6);
    cr_assert_eq(c.prefix, 128);
    cr_assert_eq(c.addr[15], 1);

    c = cidr("1.2.3.4");
    cr_assert_eq(c.family, AF_INET);
    cr_assert_eq(c.prefix, 32);
    cr_assert_eq(c.addr[3], 4);

    c = cidr("2001:db8::");
    cr_assert_eq(c.family, AF_INET6);
    cr_assert_eq(c.prefix, 128);

    cr_assert_eq(cidr("0.0.0.0/0").prefix, 0);
    cr_assert_eq(cidr("::/0").prefix, 0);
    /* 0xb8 ends in three zero bits, so /29../31 carry no host bits. */
    cr_assert_eq(cidr("2001:db8::/31").prefix, 31);
    cr_assert_eq(cidr("172.16.0.0/12").prefix, 12);
}

Test(cidr, rejects_malformed_text)
{
    static const char *const bad[] = {
        "", "10.0.0.1/8", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/+8",
        "10.0.0.0/08", "10.0.0.0/8x", "10.0.0.0/8/8", "10.0.0.0/ 8", "10.0.0", "1.2.3.4 ",
        " 1.2.3.4", "hello", "::1/12a", "fe80::1%eth0", "2001:db9::/31", "172.17.0.0/12",
        "010.0.0.1", "1.2.3.256", "/8", "0x7f000001", "::1/1280",
        "1111:2222:3333:4444:5555:6666:7777:8888:9999/128",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vf_cidr c = { .family = 12345 };
        cr_expect_eq(vf_cidr_parse(bad[i], &c), -1, "\"%s\" must be rejected", bad[i]);
        cr_expect_eq(c.family, 12345, "\"%s\": output must be untouched on error", bad[i]);
    }
    char longtext[300];
    memset(longtext, '1', sizeof longtext - 1);
    longtext[sizeof longtext - 1] = '\0';
    vf_cidr c;
    cr_assert_eq(vf_cidr_parse(longtext, &c), -1);
    cr_assert_eq(vf_cidr_parse(NULL, &c), -1);
}

/* ---- vf_cidr_contains ---- */

Test(cidr, contains_respects_prefix_bits)
{
    vf_cidr r = cidr("172.16.0.0/12");
    struct sockaddr_storage in = addr_of("172.31.255.255", 1);
    struct sockaddr_storage out = addr_of("172.32.0.0", 1);
    struct sockaddr_storage below = addr_of("172.15.255.255", 1);
    cr_assert(vf_cidr_contains(&r, (struct sockaddr *)&in));
    cr_assert_not(vf_cidr_contains(&r, (struct sockaddr *)&out));
    cr_assert_not(vf_cidr_contains(&r, (struct sockaddr *)&below));

    vf_cidr r6 = cidr("fe80::/10");
    struct sockaddr_storage a6 = addr_of("febf:ffff::1", 1);
    struct sockaddr_storage b6 = addr_of("fec0::1", 1);
    cr_assert(vf_cidr_contains(&r6, (struct sockaddr *)&a6));
    cr_assert_not(vf_cidr_contains(&r6, (struct sockaddr *)&b6));

    vf_cidr host = cidr("127.0.0.1");
    struct sockaddr_storage one = addr_of("127.0.0.1", 80), two = addr_of("127.0.0.2", 80);
    cr_assert(vf_cidr_contains(&host, (struct sockaddr *)&one));
    cr_assert_not(vf_cidr_contains(&host, (struct sockaddr *)&two));
}

Test(cidr, families_never_cross)
{
    vf_cidr all4 = cidr("0.0.0.0/0"), all6 = cidr("::/0");
    struct sockaddr_storage v4 = addr_of("1.2.3.4", 80);
    struct sockaddr_storage mapped = addr_of("::ffff:1.2.3.4", 80);
    cr_assert(vf_cidr_contains(&all4, (struct sockaddr *)&v4));
    cr_assert_not(vf_cidr_contains(&all4, (struct sockaddr *)&mapped));
    cr_assert(vf_cidr_contains(&all6, (struct sockaddr *)&mapped));
    cr_assert_not(vf_cidr_contains(&all6, (struct sockaddr *)&v4));
    cr_assert_not(vf_cidr_contains(&all4, NULL));
}

/* ---- default rules ---- */

typedef struct {
    const char *ip;
    const char *rule;   /* NULL = allowed */
} rule_case;

static const rule_case default_cases[] = {
    { "0.0.0.0", "unspecified" }, { "0.1.2.3", "unspecified" }, { "::", "unspecified" },
    { "127.0.0.1", "loopback" }, { "127.255.255.254", "loopback" }, { "::1", "loopback" },
    { "10.0.0.1", "rfc1918" }, { "10.255.255.255", "rfc1918" }, { "172.16.0.1", "rfc1918" },
    { "172.31.255.255", "rfc1918" }, { "192.168.0.1", "rfc1918" }, { "192.168.255.255", "rfc1918" },
    { "169.254.169.254", "link_local" }, { "169.254.0.1", "link_local" },
    { "fe80::1", "link_local" }, { "febf:ffff::1", "link_local" },
    { "100.64.0.1", "cgnat" }, { "100.127.255.255", "cgnat" },
    { "fc00::1", "ula" }, { "fd00:ec2::254", "ula" },
    { "224.0.0.1", "multicast" }, { "239.255.255.255", "multicast" },
    { "ff02::1", "multicast" }, { "ff0e::1", "multicast" },
    { "255.255.255.255", "broadcast" },
    { "240.0.0.1", "reserved" }, { "255.255.255.254", "reserved" }, { "192.0.0.8", "reserved" },
    { "4000::1", "reserved" }, { "100::1", "reserved" }, { "fec0::1", "reserved" },
    { "198.18.0.1", "benchmarking" }, { "198.19.255.255", "benchmarking" },
    { "2001:2::1", "benchmarking" },
    { "192.0.2.1", "documentation" }, { "198.51.100.7", "documentation" },
    { "203.0.113.9", "documentation" }, { "2001:db8::1", "documentation" },
    { "2001:db8:ffff::1", "documentation" }, { "3fff::1", "documentation" },
    { "::ffff:127.0.0.1", "ipv4_embedded_ipv6" }, { "::ffff:8.8.8.8", "ipv4_embedded_ipv6" },
    { "::ffff:0:8.8.8.8", "ipv4_embedded_ipv6" }, { "::8.8.8.8", "ipv4_embedded_ipv6" },
    { "::2", "ipv4_embedded_ipv6" }, { "64:ff9b::8.8.8.8", "ipv4_embedded_ipv6" },
    { "64:ff9b::a9fe:a9fe", "ipv4_embedded_ipv6" }, { "64:ff9b:1::1", "ipv4_embedded_ipv6" },
    { "2002:c000:0201::1", "ipv4_embedded_ipv6" },
    { "2001:0:4136:e378:8000:63bf:3fff:fdd2", "ipv4_embedded_ipv6" },
    /* public addresses and the edges just outside denied ranges */
    { "93.184.216.34", NULL }, { "1.1.1.1", NULL }, { "8.8.8.8", NULL },
    { "9.255.255.255", NULL }, { "11.0.0.0", NULL }, { "172.15.255.255", NULL },
    { "172.32.0.0", NULL }, { "192.167.255.255", NULL }, { "192.169.0.0", NULL },
    { "169.253.255.255", NULL }, { "169.255.0.0", NULL }, { "100.63.255.255", NULL },
    { "100.128.0.0", NULL }, { "126.255.255.255", NULL }, { "128.0.0.0", NULL },
    { "198.17.255.255", NULL }, { "198.20.0.0", NULL }, { "223.255.255.255", NULL },
    { "192.0.1.255", NULL }, { "192.0.3.0", NULL }, { "203.0.112.255", NULL },
    { "2606:4700::1", NULL }, { "2001:4860:4860::8888", NULL }, { "2a00:1450:4001::1", NULL },
    { "2001:db7:ffff::1", NULL }, { "2001:1::1", NULL }, { "64:ff9b:2::1", "reserved" },
};

Test(egress_defaults, every_rule_v4_and_v6)
{
    vf_egress_policy empty;
    memset(&empty, 0, sizeof empty);
    for (size_t i = 0; i < sizeof default_cases / sizeof default_cases[0]; i++)
        assert_rule(&empty, default_cases[i].ip, 443, default_cases[i].rule);
}

Test(egress_defaults, null_policy_means_defaults)
{
    for (size_t i = 0; i < sizeof default_cases / sizeof default_cases[0]; i++)
        assert_rule(NULL, default_cases[i].ip, 80, default_cases[i].rule);
    cr_assert_not_null(vf_egress_check(NULL, NULL), "no address must never be allowed");
}

Test(egress_defaults, metadata_address_is_link_local)
{
    cr_assert_str_eq(check(NULL, "169.254.169.254", 80), "link_local");
    char line[200];
    struct sockaddr_storage ss = addr_of("169.254.169.254", 80);
    vf_egress_describe("link_local", (struct sockaddr *)&ss, line, sizeof line);
    cr_assert_str_eq(line, "egress denied: 169.254.169.254 is link-local (cloud metadata) (rule link_local)");
}

Test(egress_defaults, non_ip_family_is_denied)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_family = AF_UNIX;
    cr_assert_not_null(vf_egress_check(NULL, (struct sockaddr *)&ss));
}

/* ---- rule order ---- */

Test(egress_order, embedded_ipv4_never_allowed)
{
    vf_cidr allow[] = { cidr("127.0.0.1/32"), cidr("::ffff:0:0/96"), cidr("::/0") };
    vf_egress_policy p = { .allow = allow, .n_allow = 3 };
    assert_rule(&p, "::ffff:127.0.0.1", 443, "ipv4_embedded_ipv6");
    assert_rule(&p, "64:ff9b::7f00:1", 443, "ipv4_embedded_ipv6");
    assert_rule(&p, "2002:7f00:1::1", 443, "ipv4_embedded_ipv6");
    /* The same allow list does open plain IPv4 loopback and other IPv6. */
    assert_rule(&p, "127.0.0.1", 443, NULL);
    assert_rule(&p, "fd00::1", 443, NULL);
}

Test(egress_order, allow_overrides_default_for_exact_range_only)
{
    vf_cidr allow[] = { cidr("127.0.0.1/32") };
    vf_egress_policy p = { .allow = allow, .n_allow = 1 };
    assert_rule(&p, "127.0.0.1", 80, NULL);
    assert_rule(&p, "127.0.0.2", 80, "loopback");
    assert_rule(&p, "::1", 80, "loopback");
    assert_rule(&p, "10.0.0.1", 80, "rfc1918");

    vf_cidr allow6[] = { cidr("::1/128") };
    vf_egress_policy p6 = { .allow = allow6, .n_allow = 1 };
    assert_rule(&p6, "::1", 80, NULL);
    assert_rule(&p6, "127.0.0.1", 80, "loopback");
}

Test(egress_order, tenant_deny_beats_allow_and_covers_public)
{
    vf_cidr allow[] = { cidr("127.0.0.0/8") };
    vf_cidr deny[] = { cidr("127.0.0.5/32"), cidr("93.184.216.0/24"), cidr("2606:4700::/32") };
    vf_egress_policy p = { .allow = allow, .n_allow = 1, .deny = deny, .n_deny = 3 };
    assert_rule(&p, "127.0.0.5", 443, "tenant_deny");
    assert_rule(&p, "127.0.0.6", 443, NULL);
    assert_rule(&p, "93.184.216.34", 443, "tenant_deny");
    assert_rule(&p, "2606:4700::1", 443, "tenant_deny");
    assert_rule(&p, "93.184.217.1", 443, NULL);
    /* deny is checked before the port */
    assert_rule(&p, "93.184.216.34", 22, "tenant_deny");
}

Test(egress_order, port_checked_before_address_rules)
{
    vf_egress_policy p;
    memset(&p, 0, sizeof p);
    assert_rule(&p, "10.0.0.1", 8080, "port");
    assert_rule(&p, "::ffff:10.0.0.1", 8080, "port");
    p.any_port = true;
    assert_rule(&p, "10.0.0.1", 8080, "rfc1918");
}

/* ---- ports ---- */

Test(egress_ports, default_is_80_and_443)
{
    vf_egress_policy p;
    memset(&p, 0, sizeof p);
    assert_rule(&p, "93.184.216.34", 80, NULL);
    assert_rule(&p, "93.184.216.34", 443, NULL);
    assert_rule(&p, "93.184.216.34", 8080, "port");
    assert_rule(&p, "93.184.216.34", 22, "port");
    assert_rule(&p, "93.184.216.34", 0, "port");
    assert_rule(&p, "2606:4700::1", 8443, "port");
}

Test(egress_ports, explicit_list_replaces_default)
{
    uint16_t ports[] = { 8443, 8080 };
    vf_egress_policy p = { .ports = ports, .n_ports = 2 };
    assert_rule(&p, "93.184.216.34", 8443, NULL);
    assert_rule(&p, "93.184.216.34", 8080, NULL);
    assert_rule(&p, "93.184.216.34", 443, "port");
    assert_rule(&p, "93.184.216.34", 80, "port");
}

Test(egress_ports, any_port_allows_all_but_zero)
{
    vf_egress_policy p = { .any_port = true };
    assert_rule(&p, "93.184.216.34", 1, NULL);
    assert_rule(&p, "93.184.216.34", 65535, NULL);
    assert_rule(&p, "93.184.216.34", 0, "port");
}

/* ---- broker_self ---- */

Test(egress_self, own_listener_denied_even_when_allowed)
{
    vf_cidr allow[] = { cidr("127.0.0.1/32"), cidr("::1/128") };
    struct sockaddr_storage self[] = { addr_of("127.0.0.1", 8080), addr_of("::1", 0) };
    vf_egress_policy p = { .allow = allow, .n_allow = 2, .any_port = true,
                           .self_addrs = self, .n_self = 2 };
    assert_rule(&p, "127.0.0.1", 8080, "broker_self");
    assert_rule(&p, "127.0.0.1", 8081, NULL);
    /* port 0 in self_addrs: every port of that address */
    assert_rule(&p, "::1", 1234, "broker_self");
    assert_rule(&p, "::1", 80, "broker_self");
}

Test(egress_self, public_self_address_and_family_mismatch)
{
    struct sockaddr_storage self[] = { addr_of("93.184.216.34", 443) };
    vf_egress_policy p = { .self_addrs = self, .n_self = 1 };
    assert_rule(&p, "93.184.216.34", 443, "broker_self");
    assert_rule(&p, "93.184.216.34", 80, NULL);
    assert_rule(&p, "93.184.216.35", 443, NULL);
    /* An IPv6 address is never the IPv4 listener (the mapped form is denied anyway). */
    assert_rule(&p, "2606:4700::1", 443, NULL);
}

/* ---- descriptions ---- */

static void describe(const char *rule, const char *ip, uint16_t port, char *out, size_t len)
{
    struct sockaddr_storage ss = addr_of(ip, port);
    vf_egress_describe(rule, (struct sockaddr *)&ss, out, len);
}

Test(egress_describe, every_denial_names_rule_and_address)
{
    vf_cidr deny[] = { cidr("203.0.113.0/24") };
    struct sockaddr_storage self[] = { addr_of("93.184.216.34", 443) };
    vf_egress_policy p = { .deny = deny, .n_deny = 1, .self_addrs = self, .n_self = 1 };
    static const struct { const char *ip; uint16_t port; } cases[] = {
        { "203.0.113.7", 443 }, { "93.184.216.34", 443 }, { "93.184.216.35", 22 },
        { "::ffff:127.0.0.1", 443 }, { "0.0.0.0", 443 }, { "127.0.0.1", 443 },
        { "10.0.0.1", 443 }, { "fe80::1", 443 }, { "100.64.0.1", 443 }, { "fc00::1", 443 },
        { "ff02::1", 443 }, { "255.255.255.255", 443 }, { "240.0.0.1", 443 },
        { "198.18.0.1", 443 }, { "2001:db8::1", 443 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *rule = check(&p, cases[i].ip, cases[i].port);
        cr_assert_not_null(rule, "%s should be denied", cases[i].ip);
        char line[256], want_rule[64];
        describe(rule, cases[i].ip, cases[i].port, line, sizeof line);
        snprintf(want_rule, sizeof want_rule, "(rule %s)", rule);
        cr_expect(strncmp(line, "egress denied: ", 15) == 0, "%s", line);
        cr_expect(strstr(line, cases[i].ip) != NULL, "address missing: %s", line);
        cr_expect(strstr(line, want_rule) != NULL, "rule missing: %s", line);
        cr_expect(strchr(line, '\n') == NULL, "one line: %s", line);
    }
}

Test(egress_describe, specific_wording)
{
    char line[256];
    describe("rfc1918", "10.0.0.1", 443, line, sizeof line);
    cr_assert_str_eq(line, "egress denied: 10.0.0.1 is in a private range (rule rfc1918)");
    describe("port", "93.184.216.34", 8080, line, sizeof line);
    cr_assert_str_eq(line, "egress denied: 93.184.216.34 port 8080 is not an allowed destination port (rule port)");
    describe("ipv4_embedded_ipv6", "::ffff:127.0.0.1", 443, line, sizeof line);
    cr_assert_str_eq(line, "egress denied: ::ffff:127.0.0.1 embeds IPv4 127.0.0.1 (IPv4-mapped) (rule ipv4_embedded_ipv6)");
    describe("ipv4_embedded_ipv6", "2002:c000:0201::1", 443, line, sizeof line);
    cr_assert(strstr(line, "embeds IPv4 192.0.2.1 (6to4)"), "%s", line);
    /* Teredo stores the client address inverted: ~3fff:fdd2 = 192.0.2.45 */
    describe("ipv4_embedded_ipv6", "2001:0:4136:e378:8000:63bf:3fff:fdd2", 443, line, sizeof line);
    cr_assert(strstr(line, "embeds IPv4 192.0.2.45 (Teredo)"), "%s", line);
    describe("ipv4_embedded_ipv6", "64:ff9b::a9fe:a9fe", 443, line, sizeof line);
    cr_assert(strstr(line, "embeds IPv4 169.254.169.254 (NAT64)"), "%s", line);
    describe("broker_self", "127.0.0.1", 8080, line, sizeof line);
    cr_assert(strstr(line, "127.0.0.1 port 8080 is the broker's own listener (rule broker_self)"), "%s", line);
}

Test(egress_describe, truncates_safely)
{
    char line[12];
    memset(line, 'x', sizeof line);
    describe("rfc1918", "10.0.0.1", 443, line, sizeof line);
    cr_assert_eq(strlen(line), sizeof line - 1);
    cr_assert_eq(strncmp(line, "egress deni", 11), 0);

    char untouched[4] = "abc";
    describe("rfc1918", "10.0.0.1", 443, untouched, 0);
    cr_assert_str_eq(untouched, "abc");
}

/* ---- free ---- */

Test(egress_free, releases_and_zeroes)
{
    vf_egress_policy p;
    memset(&p, 0, sizeof p);
    p.allow = calloc(2, sizeof *p.allow);
    p.n_allow = 2;
    p.deny = calloc(1, sizeof *p.deny);
    p.n_deny = 1;
    p.ports = calloc(1, sizeof *p.ports);
    p.n_ports = 1;
    p.self_addrs = calloc(1, sizeof *p.self_addrs);
    p.n_self = 1;
    p.any_port = true;
    vf_egress_policy_free(&p);
    cr_assert_null(p.allow);
    cr_assert_null(p.deny);
    cr_assert_null(p.ports);
    cr_assert_null(p.self_addrs);
    cr_assert_eq(p.n_allow + p.n_deny + p.n_ports + p.n_self, 0);
    cr_assert_not(p.any_port);
    vf_egress_policy_free(&p);   /* idempotent */
    vf_egress_policy_free(NULL);
}
