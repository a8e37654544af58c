/* E2E: redirects are followed by the broker (max 5 hops), each hop vetted by
 * the egress policy before anything connects. */
#include "test_common.h"

TestSuite(redirect, .init = hx_setup, .fini = hx_teardown, .timeout = 30);

static tc_env t;

static void expect_article_via(const char *path)
{
    const char *url = tc_url(&t, path);
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "verifetch origin article"), "%s: final page text missing: %s", path,
              text);
    free(text);
    hx_response_free(&r);
}

Test(redirect, relative_redirect_is_followed)
{
    tc_start(&t, NULL);
    expect_article_via("/redirect?to=/page");
}

Test(redirect, absolute_and_permanent_redirects_are_followed)
{
    tc_start(&t, NULL);
    char path[256];
    snprintf(path, sizeof path, "/redirect?status=301&to=http://127.0.0.1:%d/page", t.origin.port);
    expect_article_via(path);
    expect_article_via("/redirect?status=308&to=/page");
}

Test(redirect, five_hops_are_allowed)
{
    tc_start(&t, NULL);
    expect_article_via("/redirect-chain?n=5");
}

static void expect_redirect_error(const char *path)
{
    const char *url = tc_url(&t, path);
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "http_error", HX_ANY, NULL);
    e.attempts[0].detail_all[0] = "redirect";
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(!strstr(text, "redirecting"), "redirect body leaked: %s", text);
    free(text);
    hx_response_free(&r);
}

Test(redirect, six_hops_are_too_many)
{
    tc_start(&t, NULL);
    expect_redirect_error("/redirect-chain?n=6");
    /* 6 hops allowed at most: the initial request plus 5 followed redirects. */
    cr_assert_leq(hx_origin_connections(&t.origin), 6, "followed more than 5 redirects");
}

Test(redirect, loop_is_stopped)
{
    tc_start(&t, NULL);
    expect_redirect_error("/redirect-loop");
    cr_assert_leq(hx_origin_connections(&t.origin), 6, "followed more than 5 redirects");
}

/* Denied hop: transport_error naming the rule, answered quickly (nothing
 * waited on a connect to the denied address). */
static void expect_denied_hop(const char *target, const char *rule)
{
    char path[512];
    snprintf(path, sizeof path, "/redirect?to=%s", target);
    const char *url = tc_url(&t, path);
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "transport_error", HX_ANY, NULL);
    e.attempts[0].detail_all[0] = "egress denied";
    e.attempts[0].detail_all[1] = rule;
    free(hx_check_tool_result(&r, &e));
    cr_assert_lt(r.elapsed_ms, 2500.0, "denied hop took %.0f ms: was a connect attempted?",
                 r.elapsed_ms);
    hx_response_free(&r);
}

Test(redirect, hop_to_private_address_is_denied)
{
    tc_start(&t, NULL);
    expect_denied_hop("http://10.0.0.1/", "rfc1918");
}

Test(redirect, hop_to_cloud_metadata_is_denied)
{
    tc_start(&t, NULL);
    expect_denied_hop("http://169.254.169.254/latest/meta-data/", "link_local");
}

Test(redirect, hop_to_other_loopback_never_connects)
{
    tc_start(&t, NULL);
    hx_origin other;
    hx_origin_start(&other, "127.0.0.2", NULL);
    char target[128];
    snprintf(target, sizeof target, "http://127.0.0.2:%d/page", other.port);
    expect_denied_hop(target, "loopback");
    cr_assert_eq(hx_origin_connections(&other), 0, "something connected to the denied origin");
}
