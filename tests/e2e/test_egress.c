/* E2E: the broker's egress policy on direct requests and its transport
 * failures (refused, timeout), each one a transport_error that says which. */
#include "test_common.h"

TestSuite(egress, .init = hx_setup, .fini = hx_teardown, .timeout = 30);

static tc_env t;

static void expect_denied(const char *url, const char *rule)
{
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "transport_error", HX_NULL, NULL);
    e.attempts[0].detail_all[0] = "egress denied";
    e.attempts[0].detail_all[1] = rule;
    free(hx_check_tool_result(&r, &e));
    cr_assert_lt(r.elapsed_ms, 2500.0, "denial took %.0f ms: was a connect attempted?",
                 r.elapsed_ms);
    hx_response_free(&r);
}

Test(egress, connection_refused_is_transport_error)
{
    tc_start(&t, NULL);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/page", hx_closed_port());
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "transport_error", HX_NULL, NULL);
    e.attempts[0].detail_all[0] = "connect";
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "all_providers_failed"), "failure text: %s", text);
    free(text);
    hx_response_free(&r);
}

Test(egress, loopback_outside_allow_list_never_connects)
{
    tc_start(&t, NULL);
    hx_origin other;
    hx_origin_start(&other, "127.0.0.2", NULL);
    char url[128];
    expect_denied(hx_origin_url(&other, false, "/page", url, sizeof url), "loopback");
    cr_assert_eq(hx_origin_connections(&other), 0, "something connected to 127.0.0.2");
}

Test(egress, ipv6_loopback_is_denied)
{
    tc_start(&t, NULL);
    char url[128];
    snprintf(url, sizeof url, "http://[::1]:%d/page", t.origin.port);
    expect_denied(url, "loopback");
}

/* An allowed IPv4 address spelled as IPv4-mapped IPv6 is still refused. */
Test(egress, ipv4_mapped_ipv6_is_denied)
{
    tc_start(&t, NULL);
    char url[128];
    snprintf(url, sizeof url, "http://[::ffff:127.0.0.1]:%d/page", t.origin.port);
    expect_denied(url, "ipv4_embedded_ipv6");
    cr_assert_eq(hx_origin_connections(&t.origin), 0, "the mapped address reached the origin");
}

Test(egress, private_address_is_denied)
{
    tc_start(&t, NULL);
    expect_denied("http://10.0.0.1/", "rfc1918");
}

Test(egress, cloud_metadata_is_denied)
{
    tc_start(&t, NULL);
    expect_denied("http://169.254.169.254/latest/meta-data/", "link_local");
}

static void default_ports(hx_broker_opts *o)
{
    o->egress = "allow = [ \"127.0.0.1/32\" ]; ports = [ 80, 443 ]; any_port = false;";
}

Test(egress, port_outside_allow_list_is_denied)
{
    tc_start(&t, default_ports);
    expect_denied(tc_url(&t, "/page"), "port");
    cr_assert_eq(hx_origin_connections(&t.origin), 0, "the denied port was connected");
}

static void deny_beats_allow(hx_broker_opts *o)
{
    o->egress = "allow = [ \"127.0.0.1/32\" ]; deny = [ \"127.0.0.0/8\" ]; any_port = true;";
}

Test(egress, tenant_deny_overrides_allow)
{
    tc_start(&t, deny_beats_allow);
    expect_denied(tc_url(&t, "/page"), "tenant_deny");
    cr_assert_eq(hx_origin_connections(&t.origin), 0, "the denied address was connected");
}

static void short_timeout(hx_broker_opts *o) { o->timeout_ms = 1000; }

Test(egress, hanging_origin_times_out_in_bounded_time)
{
    tc_start(&t, short_timeout);
    const char *url = tc_url(&t, "/hang");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "transport_error", HX_NULL, NULL);
    e.attempts[0].detail_any[0] = "timed out";
    e.attempts[0].detail_any[1] = "timeout";
    free(hx_check_tool_result(&r, &e));
    cr_assert_geq(r.elapsed_ms, 900.0, "gave up before the timeout: %.0f ms", r.elapsed_ms);
    cr_assert_lt(r.elapsed_ms, 4000.0, "timeout 1000 ms, answer after %.0f ms", r.elapsed_ms);
    hx_response_free(&r);
    tc_assert_healthy(&t.broker);
    pid_t keep[] = { t.origin.pid };
    hx_broker_stop_checked(&t.broker, keep, 1);
}
