/* E2E: HTTPS through the worker's own TLS (CA given by the broker), and the
 * ways certificate checks must fail. */
#include "test_common.h"

TestSuite(tls, .init = hx_setup, .fini = hx_teardown, .timeout = 30);

static hx_origin tls_origin;
static hx_broker broker;

static void start(const hx_ca *origin_ca, const char *bind, const char *egress)
{
    hx_origin_start(&tls_origin, bind, origin_ca);
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    o.egress = egress;
    hx_broker_start(&broker, &o);
}

static hx_response lookup(const char *url)
{
    return hx_lookup(&broker, "{\"url\": \"%s\"}", url);
}

/* The detail must carry the real reason (certificate), not just the category. */
static void expect_certificate_failure(const char *url)
{
    hx_response r = lookup(url);
    hx_receipt_expect e = tc_expect_one(false, url, "transport_error", HX_NULL, NULL);
    e.attempts[0].detail_all[0] = "tls";
    e.attempts[0].detail_all[1] = "certificate";
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(!strstr(text, "verifetch origin article"), "page text despite TLS failure: %s", text);
    free(text);
    hx_response_free(&r);
}

Test(tls, https_with_test_ca_is_ok)
{
    start(hx_default_ca(), NULL, NULL);
    char url[256];
    hx_origin_url(&tls_origin, true, "/page", url, sizeof url);
    hx_response r = lookup(url);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "verifetch origin article"), "text: %s", text);
    free(text);
    hx_response_free(&r);
}

Test(tls, certificate_from_another_ca_is_rejected)
{
    hx_ca other;
    hx_ca_generate("other-ca", &other);
    start(&other, NULL, NULL);
    char url[256];
    expect_certificate_failure(hx_origin_url(&tls_origin, true, "/page", url, sizeof url));
}

/* The certificate names 127.0.0.1 and localhost only; 127.0.0.2 must not pass. */
Test(tls, certificate_for_another_host_is_rejected)
{
    start(hx_default_ca(), "127.0.0.2", "allow = [ \"127.0.0.0/8\" ]; any_port = true;");
    char url[256];
    expect_certificate_failure(hx_origin_url(&tls_origin, true, "/page", url, sizeof url));
}

Test(tls, https_to_plain_http_port_fails)
{
    hx_origin plain;
    hx_origin_start(&plain, NULL, NULL);
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    hx_broker_start(&broker, &o);
    char url[256];
    hx_origin_url(&plain, true, "/page", url, sizeof url);
    hx_response r = lookup(url);
    hx_receipt_expect e = tc_expect_one(false, url, "transport_error", HX_NULL, NULL);
    e.attempts[0].detail_all[0] = "tls";
    e.attempts[0].detail_any[0] = "ssl";
    e.attempts[0].detail_any[1] = "wrong version";
    e.attempts[0].detail_any[2] = "handshake";
    e.attempts[0].detail_any[3] = "record";
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

Test(tls, redirect_from_http_to_https_is_followed)
{
    start(hx_default_ca(), NULL, NULL);
    hx_origin plain;
    hx_origin_start(&plain, NULL, NULL);
    char target[256], path[320], url[512];
    hx_origin_url(&tls_origin, true, "/page", target, sizeof target);
    snprintf(path, sizeof path, "/redirect?to=%s", target);
    hx_origin_url(&plain, false, path, url, sizeof url);
    hx_response r = lookup(url);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "verifetch origin article"), "text: %s", text);
    cr_assert_eq(hx_origin_connections(&tls_origin), 1, "TLS origin not reached exactly once");
    free(text);
    hx_response_free(&r);
}
