/* The URL a keyed provider will fetch is judged by the tenant's egress
 * rules before any provider sees it (issue 13 item 4). */
#include <criterion/criterion.h>
#include <string.h>

#include "policy/egress_target.h"

static const char *check(const vf_egress_policy *p, const char *host, uint16_t port)
{
    char detail[256] = "";
    const char *rule = vf_egress_check_target(p, host, port, detail, sizeof detail);
    if (rule)
        cr_assert(strstr(detail, rule), "detail '%s' does not name rule %s", detail, rule);
    return rule;
}

Test(egress_target, default_denials_apply_to_ip_literals)
{
    vf_egress_policy p = {0};
    cr_assert_str_eq(check(&p, "169.254.169.254", 80), "link_local");
    cr_assert_str_eq(check(&p, "10.0.0.5", 443), "rfc1918");
    cr_assert_str_eq(check(&p, "127.0.0.1", 80), "loopback");
    cr_assert_str_eq(check(&p, "[::1]", 80), "loopback");
    cr_assert_str_eq(check(&p, "::ffff:169.254.169.254", 80), "ipv4_embedded_ipv6");
    cr_assert_str_eq(check(&p, "[fd00::1]", 443), "ula");
    cr_assert_null(check(&p, "93.184.216.34", 443));
}

Test(egress_target, ports_apply_to_literals_and_names)
{
    vf_egress_policy p = {0};
    cr_assert_str_eq(check(&p, "93.184.216.34", 8080), "port");
    cr_assert_str_eq(check(&p, "www.example.com", 8080), "port");
    cr_assert_null(check(&p, "www.example.com", 443));
    uint16_t ports[] = {8443};
    vf_egress_policy q = {.ports = ports, .n_ports = 1};
    cr_assert_null(check(&q, "www.example.com", 8443));
    cr_assert_str_eq(check(&q, "www.example.com", 443), "port");
}

Test(egress_target, names_only_the_provider_resolves_are_judged_by_name)
{
    vf_egress_policy p = {0};
    cr_assert_str_eq(check(&p, "metadata.google.internal", 80), "internal_name");
    cr_assert_str_eq(check(&p, "metadata", 80), "internal_name");
    cr_assert_str_eq(check(&p, "localhost", 80), "internal_name");
    cr_assert_str_eq(check(&p, "api.localhost.", 80), "internal_name");
    cr_assert_str_eq(check(&p, "printer.local", 80), "internal_name");
    cr_assert_str_eq(check(&p, "nas.home.arpa", 443), "internal_name");
    cr_assert_null(check(&p, "internal.example.com", 443));
    cr_assert_null(check(&p, "www.local-news.com", 443));
}

Test(egress_target, tenant_host_and_cidr_rules_apply)
{
    char *deny_hosts[] = {"*.example.org"};
    char *allow_hosts[] = {"wiki.corp"};
    vf_cidr deny, allow;
    cr_assert_eq(vf_cidr_parse("203.0.113.0/24", &deny), 0);
    cr_assert_eq(vf_cidr_parse("10.1.0.0/16", &allow), 0);
    vf_egress_policy p = {.deny_hosts = deny_hosts, .n_deny_hosts = 1, .allow_hosts = allow_hosts,
                          .n_allow_hosts = 1, .deny = &deny, .n_deny = 1, .allow = &allow, .n_allow = 1};
    cr_assert_str_eq(check(&p, "a.example.org", 443), "tenant_deny_host");
    cr_assert_str_eq(check(&p, "203.0.113.9", 443), "tenant_deny");
    cr_assert_null(check(&p, "10.1.2.3", 443));
    cr_assert_null(check(&p, "wiki.corp", 443));
    cr_assert_str_eq(check(&p, "git.corp", 443), "internal_name");
}
