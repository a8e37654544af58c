/* Egress host name rules: pattern parsing and globbing, deny_hosts,
 * the allow_hosts exemption and what it never overrides, the broker's own
 * listener registration, and host-aware descriptions. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <criterion/criterion.h>

#include "policy/config.h"
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

static vf_cidr cidr(const char *text)
{
    vf_cidr c;
    cr_assert_eq(vf_cidr_parse(text, &c), 0, "test CIDR %s should parse", text);
    return c;
}

static void expect_host_rule(const vf_egress_policy *p, const char *host, const char *ip,
                             uint16_t port, const char *expected)
{
    struct sockaddr_storage ss = addr_of(ip, port);
    const char *got = vf_egress_check_host(p, host, (const struct sockaddr *)&ss);
    if (!expected)
        cr_expect_null(got, "%s -> %s:%u: expected allowed, got %s", host ? host : "(no host)", ip,
                       port, got);
    else
        cr_expect(got && strcmp(got, expected) == 0, "%s -> %s:%u: expected %s, got %s",
                  host ? host : "(no host)", ip, port, expected, got ? got : "(allowed)");
}

/* ---- vf_host_pattern_match ---- */

Test(host_pattern, glob_matches_subdomains_only)
{
    static const struct { const char *pattern, *host; bool match; } cases[] = {
        { "*.example.com", "a.example.com", true },
        { "*.example.com", "a.b.example.com", true },
        { "*.example.com", "A.Example.COM", true },
        { "*.example.com", "a.example.com.", true },
        { "*.example.com", "x-1_y.example.com", true },
        { "*.example.com", "example.com", false },
        { "*.example.com", "example.com.", false },
        { "*.example.com", "badexample.com", false },
        { "*.example.com", "a.badexample.com", false },
        { "*.example.com", "a.example.com.evil", false },
        { "*.example.com", "a.example.co", false },
        { "*.example.com", "a.example.com..", false },
        { "*.example.com", ".example.com", false },
        { "*.example.com", "", false },
        { "metadata.google.internal", "metadata.google.internal", true },
        { "metadata.google.internal", "METADATA.Google.Internal.", true },
        { "metadata.google.internal", "x.metadata.google.internal", false },
        { "metadata.google.internal", "metadata.google.internal.x", false },
        { "metadata.google.internal", "metadata.google.interna", false },
        { "metadata.google.internal", "", false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(vf_host_pattern_match(cases[i].pattern, cases[i].host), cases[i].match,
                     "\"%s\" vs \"%s\": expected %s", cases[i].pattern, cases[i].host,
                     cases[i].match ? "match" : "no match");
    cr_assert_not(vf_host_pattern_match(NULL, "a.example.com"));
    cr_assert_not(vf_host_pattern_match("*.example.com", NULL));
}

Test(host_pattern, parse_normalizes_and_rejects)
{
    char out[VF_HOST_NAME_MAX + 1];
    static const struct { const char *in, *out; } good[] = {
        { "*.Example.COM", "*.example.com" }, { "Example.com.", "example.com" },
        { "localhost", "localhost" }, { "xn--bcher-kva.example", "xn--bcher-kva.example" },
        { "*.com", "*.com" }, { "a_b-c.example", "a_b-c.example" }, { "1.example", "1.example" },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *why = vf_host_pattern_parse(good[i].in, out, sizeof out);
        cr_expect_null(why, "\"%s\": %s", good[i].in, why);
        if (!why)
            cr_expect_str_eq(out, good[i].out);
    }
    static const char *const bad[] = {
        "", "*", "*.", "**.example", "a*.example", "a.*", "a b", "a/b", "a:443", "a..b", ".a",
        "10.0.0.1", "example.123", "b\xc3\xbc" "cher.example", "a\tb",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strcpy(out, "untouched");
        cr_expect_not_null(vf_host_pattern_parse(bad[i], out, sizeof out), "\"%s\" must be rejected", bad[i]);
        cr_expect_str_eq(out, "untouched");
    }
    char small[8];
    cr_assert_not_null(vf_host_pattern_parse("a.example", small, sizeof small), "outlen too small");
    cr_assert_not_null(vf_host_pattern_parse(NULL, out, sizeof out));
}

/* ---- deny_hosts / allow_hosts ---- */

static char *deny_list[] = { "*.evil.example", "metadata.google.internal", "secret.internal.example" };
static char *allow_list[] = { "*.internal.example", "exact.partner.example" };

static vf_egress_policy host_policy(void)
{
    vf_egress_policy p;
    memset(&p, 0, sizeof p);
    p.deny_hosts = deny_list;
    p.n_deny_hosts = 3;
    p.allow_hosts = allow_list;
    p.n_allow_hosts = 2;
    return p;
}

Test(egress_hosts, deny_hosts_named_rule)
{
    vf_egress_policy p = host_policy();
    cr_assert_str_eq(vf_egress_host_check(&p, "a.evil.example"), "tenant_deny_host");
    cr_assert_str_eq(vf_egress_host_check(&p, "x.y.EVIL.example."), "tenant_deny_host");
    cr_assert_str_eq(vf_egress_host_check(&p, "metadata.google.internal"), "tenant_deny_host");
    cr_assert_null(vf_egress_host_check(&p, "evil.example"), "the apex is not *.evil.example");
    cr_assert_null(vf_egress_host_check(&p, "notevil.example"));
    cr_assert_null(vf_egress_host_check(&p, "db.internal.example"));
    cr_assert_null(vf_egress_host_check(&p, NULL));
    cr_assert_null(vf_egress_host_check(NULL, "a.evil.example"));
    /* A denied name is refused whatever it resolves to, even before resolving. */
    expect_host_rule(&p, "a.evil.example", "93.184.216.34", 443, "tenant_deny_host");
    cr_assert_str_eq(vf_egress_check_host(&p, "metadata.google.internal", NULL), "tenant_deny_host");
    expect_host_rule(&p, "good.example", "93.184.216.34", 443, NULL);
}

Test(egress_hosts, allowed_explicitly)
{
    vf_egress_policy p = host_policy();
    cr_assert(vf_egress_host_allowed_explicitly(&p, "db.internal.example"));
    cr_assert(vf_egress_host_allowed_explicitly(&p, "A.B.Internal.Example."));
    cr_assert(vf_egress_host_allowed_explicitly(&p, "exact.partner.example"));
    cr_assert_not(vf_egress_host_allowed_explicitly(&p, "internal.example"));
    cr_assert_not(vf_egress_host_allowed_explicitly(&p, "x.exact.partner.example"));
    cr_assert_not(vf_egress_host_allowed_explicitly(&p, "secret.internal.example"),
                  "deny_hosts wins over allow_hosts");
    cr_assert_not(vf_egress_host_allowed_explicitly(&p, NULL));
    cr_assert_not(vf_egress_host_allowed_explicitly(NULL, "db.internal.example"));
}

Test(egress_hosts, allowed_name_resolving_to_private_address)
{
    vf_egress_policy p = host_policy();
    /* The case from issue 4: a name resolving to 10.0.0.1. */
    expect_host_rule(&p, "db.internal.example", "10.0.0.1", 443, NULL);
    expect_host_rule(&p, "unlisted.example", "10.0.0.1", 443, "rfc1918");
    expect_host_rule(&p, NULL, "10.0.0.1", 443, "rfc1918");
    expect_host_rule(&p, "internal.example", "10.0.0.1", 443, "rfc1918");
    expect_host_rule(&p, "secret.internal.example", "10.0.0.1", 443, "tenant_deny_host");
    struct sockaddr_storage ss = addr_of("10.0.0.1", 443);
    cr_assert_str_eq(vf_egress_check(&p, (struct sockaddr *)&ss), "rfc1918",
                     "vf_egress_check ignores host lists");
    /* the exemption covers the default special-purpose ranges */
    expect_host_rule(&p, "db.internal.example", "127.0.0.1", 80, NULL);
    expect_host_rule(&p, "db.internal.example", "169.254.169.254", 80, NULL);
    expect_host_rule(&p, "db.internal.example", "fd00::5", 443, NULL);
    expect_host_rule(&p, "db.internal.example", "100.64.1.1", 443, NULL);
}

Test(egress_hosts, allow_hosts_never_beats_deny_self_port_or_embedded)
{
    vf_cidr deny[] = { cidr("10.9.0.0/16"), cidr("fd00:bad::/32") };
    vf_egress_policy p = host_policy();
    p.deny = deny;
    p.n_deny = 2;
    struct sockaddr_storage self = addr_of("127.0.0.1", 8089);
    cr_assert_eq(vf_egress_add_self(&p, (struct sockaddr *)&self), 0);

    expect_host_rule(&p, "db.internal.example", "10.9.1.1", 443, "tenant_deny");
    expect_host_rule(&p, "db.internal.example", "fd00:bad::1", 443, "tenant_deny");
    expect_host_rule(&p, "db.internal.example", "10.8.1.1", 443, NULL);
    /* broker_self is decided before the port, so it names the real reason */
    expect_host_rule(&p, "db.internal.example", "127.0.0.1", 8089, "broker_self");
    expect_host_rule(&p, "db.internal.example", "127.0.0.1", 8090, "port");
    p.any_port = true;
    expect_host_rule(&p, "db.internal.example", "127.0.0.1", 8089, "broker_self");
    expect_host_rule(&p, "db.internal.example", "127.0.0.1", 8090, NULL);
    p.any_port = false;
    expect_host_rule(&p, "db.internal.example", "10.0.0.1", 22, "port");
    expect_host_rule(&p, "db.internal.example", "::ffff:10.0.0.1", 443, "ipv4_embedded_ipv6");
    expect_host_rule(&p, "db.internal.example", "64:ff9b::a00:1", 443, "ipv4_embedded_ipv6");
    free(p.self_addrs);
}

/* ---- vf_egress_add_self ---- */

Test(egress_self_add, registers_dedupes_and_bounds)
{
    vf_egress_policy p;
    memset(&p, 0, sizeof p);
    vf_cidr allow[] = { cidr("127.0.0.0/8"), cidr("::1/128"), cidr("0.0.0.0/32"), cidr("::/128") };
    p.allow = allow;
    p.n_allow = 4;
    p.any_port = true;
    struct sockaddr_storage v4 = addr_of("127.0.0.1", 8089), v6 = addr_of("::1", 8089);

    cr_assert_eq(vf_egress_add_self(&p, (struct sockaddr *)&v4), 0);
    cr_assert_eq(vf_egress_add_self(&p, (struct sockaddr *)&v4), 0);
    cr_assert_eq(p.n_self, 1, "a duplicate is ignored");
    cr_assert_eq(vf_egress_add_self(&p, (struct sockaddr *)&v6), 0);
    cr_assert_eq(p.n_self, 2);

    expect_host_rule(&p, NULL, "127.0.0.1", 8089, "broker_self");
    expect_host_rule(&p, NULL, "::1", 8089, "broker_self");
    expect_host_rule(&p, NULL, "127.0.0.2", 8089, NULL);
    expect_host_rule(&p, NULL, "127.0.0.1", 8088, NULL);
    /* 0.0.0.0 and :: connect to a local address: the listener is reachable that way */
    expect_host_rule(&p, NULL, "0.0.0.0", 8089, "broker_self");
    expect_host_rule(&p, NULL, "::", 8089, "broker_self");
    expect_host_rule(&p, NULL, "0.0.0.0", 8090, NULL);

    struct sockaddr_un un = { .sun_family = AF_UNIX };
    errno = 0;
    cr_assert_eq(vf_egress_add_self(&p, (struct sockaddr *)&un), -1);
    cr_assert_eq(errno, EINVAL);
    cr_assert_eq(vf_egress_add_self(&p, NULL), -1);
    cr_assert_eq(vf_egress_add_self(NULL, (struct sockaddr *)&v4), -1);

    for (uint16_t port = 1; p.n_self < VF_EGRESS_SELF_MAX; port++) {
        struct sockaddr_storage ss = addr_of("127.0.0.1", port);
        cr_assert_eq(vf_egress_add_self(&p, (struct sockaddr *)&ss), 0);
    }
    struct sockaddr_storage one_more = addr_of("127.0.0.1", 9999);
    errno = 0;
    cr_assert_eq(vf_egress_add_self(&p, (struct sockaddr *)&one_more), -1);
    cr_assert_eq(errno, ENOSPC);
    cr_assert_eq(p.n_self, VF_EGRESS_SELF_MAX);
    expect_host_rule(&p, NULL, "127.0.0.1", 9999, NULL);
    free(p.self_addrs);
}

Test(egress_self_add, config_registers_for_every_tenant)
{
    vf_config cfg;
    char err[512];
    cr_assert_eq(vf_config_default(&cfg, err, sizeof err), 0, "%s", err);
    struct sockaddr_storage v4 = addr_of("93.184.216.34", 443);
    cr_assert_eq(vf_config_add_self(&cfg, (struct sockaddr *)&v4), 0);
    for (size_t i = 0; i < cfg.n_tenants; i++) {
        cr_assert_eq(cfg.tenants[i].egress.n_self, 1);
        cr_assert_str_eq(vf_egress_check(&cfg.tenants[i].egress, (struct sockaddr *)&v4), "broker_self");
    }
    cr_assert_eq(vf_config_add_self(NULL, (struct sockaddr *)&v4), -1);
    vf_config_free(&cfg);
}

/* ---- free and describe ---- */

Test(egress_hosts, free_releases_host_lists)
{
    vf_egress_policy p;
    memset(&p, 0, sizeof p);
    p.allow_hosts = calloc(2, sizeof *p.allow_hosts);
    p.allow_hosts[0] = strdup("*.a.example");
    p.allow_hosts[1] = strdup("b.example");
    p.n_allow_hosts = 2;
    p.deny_hosts = calloc(1, sizeof *p.deny_hosts);
    p.deny_hosts[0] = strdup("c.example");
    p.n_deny_hosts = 1;
    vf_egress_policy_free(&p);
    cr_assert_null(p.allow_hosts);
    cr_assert_null(p.deny_hosts);
    cr_assert_eq(p.n_allow_hosts + p.n_deny_hosts, 0);
    vf_egress_policy_free(&p);   /* idempotent: ASan would flag a double free */
}

Test(egress_hosts, describe_names_the_host_safely)
{
    char line[400];
    struct sockaddr_storage ss = addr_of("10.0.0.1", 443);
    vf_egress_describe_host("tenant_deny_host", "metadata.google.internal", NULL, line, sizeof line);
    cr_assert_str_eq(line, "egress denied: host metadata.google.internal is denied for this tenant (rule tenant_deny_host)");
    vf_egress_describe_host("tenant_deny_host", "a\nb.evil.example\r\x01", (struct sockaddr *)&ss, line, sizeof line);
    cr_assert_str_eq(line, "egress denied: host a?b.evil.example?? is denied for this tenant (rule tenant_deny_host)");
    /* other rules describe the address as before */
    vf_egress_describe_host("rfc1918", "db.example", (struct sockaddr *)&ss, line, sizeof line);
    cr_assert_str_eq(line, "egress denied: 10.0.0.1 is in a private range (rule rfc1918)");
    vf_egress_describe("tenant_deny_host", (struct sockaddr *)&ss, line, sizeof line);
    cr_assert_str_eq(line, "egress denied: 10.0.0.1 belongs to a host name this tenant denies (rule tenant_deny_host)");

    char huge[1000];
    memset(huge, 'h', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    vf_egress_describe_host("tenant_deny_host", huge, NULL, line, sizeof line);
    cr_assert_lt(strlen(line), 100 + VF_HOST_NAME_MAX, "host cut at VF_HOST_NAME_MAX: %zu", strlen(line));
    char tiny[10] = "keep";
    vf_egress_describe_host("tenant_deny_host", "x.example", NULL, tiny, 0);
    cr_assert_str_eq(tiny, "keep");
}
