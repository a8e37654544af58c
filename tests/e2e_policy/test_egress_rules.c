/* E2E: egress rules with no allow list. Odd address spellings, IPv4-embedded
 * IPv6, metadata, a name resolving to a private address (through the broker's
 * own /etc/hosts in a private mount namespace), host deny/allow rules and
 * ports, each refused (or exempted) with the rule named in the receipt. No
 * traffic is ever sent to a non-loopback address: those are refused before
 * connect. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "pol.h"

TestSuite(egress_rules, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static pol_broker broker;

static const char hosts_file[] =
    "127.0.0.1 localhost\n"
    "10.0.0.1 internal.test\n"
    "127.0.0.1 allowed.test plain.test\n";

static void start(const char *egress, bool private_hosts)
{
    char tenants[1024];
    /* robots.txt ignored: the tests count origin connections exactly. */
    pol_fmt(tenants, sizeof tenants, "{ name = \"eg\"; uids = [ 0 ]; robots = \"ignore\"; egress = { %s }; }",
            egress);
    pol_broker_opts o = { .tenants = tenants, .hosts = private_hosts ? hosts_file : NULL };
    pol_broker_start(&broker, &o);
}

/* One direct attempt, refused by `rule`, quickly (nothing was connected). */
static void expect_denied(const char *url, const char *rule, const char *also)
{
    hx_response r = pol_lookup(&broker, url, NULL);
    char named[64];
    pol_fmt(named, sizeof named, "(rule %s)", rule);
    hx_receipt_expect e = {
        .ok = false, .max_attempts = -1, .providers_available = 1,
        .failure_reason = "all_providers_failed", .n_attempts = 1,
        .attempts = { { .provider = "direct", .outcome = "transport_error", .http_status = HX_NULL,
                        .detail_all = { "egress denied", named, also } } },
    };
    free(hx_check_tool_result(&r, &e));
    cr_assert_lt(r.elapsed_ms, 2500.0, "%s: the denial took %.0f ms; was a connect attempted?", url,
                 r.elapsed_ms);
    hx_response_free(&r);
}

static long long denials(const char *rule)
{
    hx_response m = hx_request(&broker.hx, "GET", "/metrics", NULL, 0);
    char series[128];
    pol_fmt(series, sizeof series, "verifetch_egress_denials_total{tenant=\"eg\",rule=\"%s\"}", rule);
    long long n = pol_metric(m.body, series);
    hx_response_free(&m);
    return n;
}

Test(egress_rules, cloud_metadata_is_link_local)
{
    start("", false);
    expect_denied("http://169.254.169.254/", "link_local", "169.254.169.254");
    expect_denied("http://169.254.169.254/latest/meta-data/", "link_local", NULL);
    cr_assert_eq(denials("link_local"), 2);
}

Test(egress_rules, ipv4_mapped_ipv6_is_named)
{
    start("", false);
    expect_denied("http://[::ffff:127.0.0.1]/", "ipv4_embedded_ipv6", NULL);
    expect_denied("http://[::ffff:169.254.169.254]/", "ipv4_embedded_ipv6", NULL);
}

/* Whatever the URL parser makes of these, each is 127.0.0.1 and refused as loopback. */
Test(egress_rules, numeric_ipv4_spellings_are_loopback)
{
    start("", false);
    const char *urls[] = { "http://2130706433/", "http://0177.0.0.1/", "http://0x7f000001/",
                           "http://127.1/", "http://0x7f.0.0.1/" };
    for (size_t i = 0; i < sizeof urls / sizeof *urls; i++)
        expect_denied(urls[i], "loopback", "127.0.0.1");
    cr_assert_eq(denials("loopback"), (long long)(sizeof urls / sizeof *urls));
    expect_denied("http://0.0.0.0/", "unspecified", NULL);
}

Test(egress_rules, name_resolving_to_private_address_is_rfc1918)
{
    start("any_port = true;", true);
    expect_denied("http://internal.test/", "rfc1918", "10.0.0.1");
    expect_denied("http://internal.test:8080/admin", "rfc1918", "10.0.0.1");
    cr_assert_eq(denials("rfc1918"), 2);
}

/* deny_hosts refuses before resolution: the name is in no hosts file and
 * would not resolve, yet the detail names the rule, not a DNS failure. */
Test(egress_rules, deny_hosts_glob_refuses_before_resolving)
{
    start("deny_hosts = [ \"*.blocked.test\" ]; any_port = true;", true);
    expect_denied("http://api.blocked.test/", "tenant_deny_host", "api.blocked.test");
    expect_denied("http://a.b.blocked.test/x", "tenant_deny_host", NULL);
    cr_assert_eq(denials("tenant_deny_host"), 2);
}

/* allow_hosts exempts a name's addresses from the default denials while
 * 127.0.0.1 itself stays outside the allow CIDRs. */
Test(egress_rules, allow_hosts_exempts_a_name_not_its_address)
{
    start("allow_hosts = [ \"allowed.test\" ]; any_port = true;", true);
    hx_origin origin;
    hx_origin_start(&origin, NULL, NULL);
    char url[256];
    pol_fmt(url, sizeof url, "http://allowed.test:%d/page", origin.port);
    hx_response r = pol_lookup(&broker, url, NULL);
    hx_receipt_expect e = {
        .ok = true, .url = url, .max_attempts = -1, .providers_available = 1, .n_attempts = 1,
        .attempts = { { .provider = "direct", .outcome = "ok", .http_status = 200 } },
    };
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
    cr_assert_eq(hx_origin_connections(&origin), 1);

    /* Same address, a name allow_hosts does not list; and the bare IP. */
    pol_fmt(url, sizeof url, "http://plain.test:%d/page", origin.port);
    expect_denied(url, "loopback", "127.0.0.1");
    pol_fmt(url, sizeof url, "http://127.0.0.1:%d/page", origin.port);
    expect_denied(url, "loopback", NULL);
    cr_assert_eq(hx_origin_connections(&origin), 1, "a denied lookup reached the origin");
}

Test(egress_rules, ephemeral_port_refused_without_any_port)
{
    start("allow = [ \"127.0.0.1/32\" ];", false);
    hx_origin origin;
    hx_origin_start(&origin, NULL, NULL);
    char url[256];
    expect_denied(hx_origin_url(&origin, false, "/page", url, sizeof url), "port", NULL);
    cr_assert_eq(hx_origin_connections(&origin), 0, "the refused port was connected");
    cr_assert_eq(denials("port"), 1);
}

/* Name rules apply to every redirect hop, with that hop's host. */
Test(egress_rules, name_rules_apply_to_redirect_hops)
{
    start("allow = [ \"127.0.0.1/32\" ]; deny_hosts = [ \"*.blocked.test\" ]; any_port = true;", true);
    hx_origin origin;
    hx_origin_start(&origin, NULL, NULL);
    static const struct {
        const char *to, *rule;
    } hops[] = {
        { "http://api.blocked.test/", "tenant_deny_host" },
        { "http://internal.test/", "rfc1918" },
    };
    for (size_t i = 0; i < sizeof hops / sizeof *hops; i++) {
        char path[256], url[512], named[64];
        pol_fmt(path, sizeof path, "/redirect?to=%s", hops[i].to);
        hx_origin_url(&origin, false, path, url, sizeof url);
        pol_fmt(named, sizeof named, "(rule %s)", hops[i].rule);
        hx_response r = pol_lookup(&broker, url, NULL);
        hx_receipt_expect e = {
            .ok = false, .url = url, .max_attempts = -1, .providers_available = 1,
            .failure_reason = "all_providers_failed", .n_attempts = 1,
            .attempts = { { .provider = "direct", .outcome = "transport_error", .http_status = HX_ANY,
                            .detail_all = { "egress denied", named } } },
        };
        free(hx_check_tool_result(&r, &e));
        cr_assert_lt(r.elapsed_ms, 2500.0, "denied hop took %.0f ms", r.elapsed_ms);
        hx_response_free(&r);
    }
    cr_assert_eq(hx_origin_connections(&origin), 2, "one connection per first hop only");
    cr_assert_eq(denials("tenant_deny_host"), 1, "a denied hop is an egress denial too");
    cr_assert_eq(denials("rfc1918"), 1);
}

/* Issue 13 item 13: the broker judges the one ASCII (UTS-46) spelling of a
 * host, the one the worker would connect to. Before, "bücher.test" and its
 * other spellings slipped past a deny_hosts rule naming the xn-- form (and
 * failed later as a DNS error). Redirect hops are normalised the same way. */
Test(egress_rules, unicode_host_spellings_meet_deny_hosts)
{
    start("allow = [ \"127.0.0.1/32\" ]; deny_hosts = [ \"xn--bcher-kva.test\" ]; any_port = true;", true);
    static const char *spellings[] = {
        "http://b\xc3\xbc" "cher.test/",                      /* bücher.test, NFC */
        "http://bu\xcc\x88" "cher.test/",                     /* u + combining diaeresis */
        "http://B\xc3\x9c" "CHER.TEST/",                      /* BÜCHER.TEST */
        "http://\xef\xbd\x82\xc3\xbc\xef\xbd\x83\xef\xbd\x88\xef\xbd\x85\xef\xbd\x92"
        "\xef\xbc\x8e\xef\xbd\x94\xef\xbd\x85\xef\xbd\x93\xef\xbd\x94/", /* fullwidth, fullwidth dot */
        "http://b%C3%BCcher.test/",                           /* percent-encoded */
    };
    for (size_t i = 0; i < sizeof spellings / sizeof *spellings; i++)
        expect_denied(spellings[i], "tenant_deny_host", "xn--bcher-kva.test");
    cr_assert_eq(denials("tenant_deny_host"), 5);

    hx_origin origin;
    hx_origin_start(&origin, NULL, NULL);
    char url[512];
    hx_origin_url(&origin, false, "/redirect?to=http://b%25C3%25BCcher.test/", url, sizeof url);
    hx_response r = pol_lookup(&broker, url, NULL);
    hx_receipt_expect e = {
        .ok = false, .url = url, .max_attempts = -1, .providers_available = 1,
        .failure_reason = "all_providers_failed", .n_attempts = 1,
        .attempts = { { .provider = "direct", .outcome = "transport_error", .http_status = HX_ANY,
                        .detail_all = { "egress denied", "(rule tenant_deny_host)" } } },
    };
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
    cr_assert_eq(denials("tenant_deny_host"), 6);
}

/* A host with no valid UTS-46 form is refused at the door. */
Test(egress_rules, host_without_ascii_form_is_400)
{
    start("any_port = true;", false);
    const char body[] = "{\"url\": \"http://b\xef\xbf\xbd.test/\"}";   /* U+FFFD is disallowed */
    hx_response r = hx_request(&broker.hx, "POST", "/v1/lookup", body, strlen(body));
    cr_assert_eq(r.status, 400, "HTTP %ld: %s", r.status, r.body);
    cr_assert(strstr(r.body, "\"url\""), "%s", r.body);
    hx_response_free(&r);
}
