/* E2E (issue 13 item 4): a keyed provider never sees a target the tenant's
 * egress rules refuse. Metadata addresses (also in odd IPv4 spellings),
 * private ranges, internal names, deny_hosts and disallowed ports end as a
 * transport_error naming the rule, and the provider endpoint on the
 * loopback origin logs no request for them; an allowed target does reach it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "provider_env.h"

TestSuite(target_egress, .init = pe_setup, .fini = pe_teardown, .timeout = 60);

static hx_origin origin;
static hx_broker broker;

static void start(void)
{
    hx_origin_start(&origin, NULL, NULL);
    char endpoint[256], egress[256];
    hx_origin_url(&origin, false, "/page", endpoint, sizeof endpoint);
    char *provider = pe_http_api_provider("keyed", endpoint, NULL);
    char *list = pe_provider_list(provider, NULL, NULL, NULL);
    snprintf(egress, sizeof egress,
             "allow = [ \"127.0.0.1/32\" ]; ports = [ 80, 443, %d ]; deny_hosts = [ \"*.blocked.test\" ];",
             origin.port);
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    o.providers = list;
    o.egress = egress;
    hx_broker_start(&broker, &o);
    free(list);
    free(provider);
}

static int provider_requests(void)
{
    char *log = hx_read_file(origin.log_path, NULL);
    int n = 0;
    for (const char *p = log; p && (p = strstr(p, "REQ GET /page?url=")); p++)
        n++;
    free(log);
    return n;
}

static void expect_denied(const char *target, const char *rule)
{
    int before = provider_requests();
    hx_response r = pe_lookup(&broker, target, NULL);
    json_t *a = json_array_get(json_object_get(hx_receipt(&r), "attempts_log"), 0);
    const char *outcome = json_string_value(json_object_get(a, "outcome"));
    const char *detail = json_string_value(json_object_get(a, "detail"));
    cr_assert(outcome && strcmp(outcome, "transport_error") == 0, "%s: %s", target, r.body);
    cr_assert(detail && strstr(detail, rule), "%s: detail does not name %s: %s", target, rule, r.body);
    cr_assert_eq(provider_requests(), before, "%s reached the provider", target);
    hx_response_free(&r);
}

Test(target_egress, refused_targets_never_reach_the_provider)
{
    start();
    expect_denied("http://169.254.169.254/latest/meta-data/", "link_local");
    expect_denied("http://0xa9.254.169.254/latest/meta-data/", "link_local");
    expect_denied("http://[::ffff:169.254.169.254]/", "ipv4_embedded_ipv6");
    expect_denied("http://10.0.0.5/", "rfc1918");
    expect_denied("http://metadata.google.internal/computeMetadata/v1/", "internal_name");
    expect_denied("http://a.blocked.test/", "tenant_deny_host");
    expect_denied("http://www.example.com:8080/", "port");
}

Test(target_egress, allowed_target_reaches_the_provider)
{
    start();
    char target[256];
    hx_origin_url(&origin, false, "/page", target, sizeof target);
    hx_response r = pe_lookup(&broker, target, NULL);
    cr_assert_eq(provider_requests(), 1, "the provider was not asked: %s", r.body);
    hx_response_free(&r);
}
