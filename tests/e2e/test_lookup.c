/* E2E: one direct provider fetching from a loopback origin; every usability
 * verdict checked through the full ToolResult and receipt. */
#include "test_common.h"

TestSuite(lookup, .init = hx_setup, .fini = hx_teardown, .timeout = 30);

static tc_env t;

static void assert_article(const char *text)
{
    cr_assert(strstr(text, "verifetch origin article"), "article text missing: %s", text);
    cr_assert(strstr(text, "Origin heading for verifetch"), "heading missing: %s", text);
    cr_assert(strstr(text, "Authentication: required."), "ordinary prose was altered: %s", text);
    cr_assert(!strstr(text, "SCRIPT_MARKER"), "script content leaked into text: %s", text);
    cr_assert(!strstr(text, "STYLE_MARKER"), "style content leaked into text: %s", text);
    cr_assert(!strstr(text, "<p>") && !strstr(text, "<h1") && !strstr(text, "</"),
              "markup left in text: %s", text);
}

/* A failed lookup names the reason and carries no page text. */
static void assert_failure_text(const char *text)
{
    cr_assert(strncmp(text, "LOOKUP FAILED:", 14) == 0, "text: %s", text);
    cr_assert(!strstr(text, "verifetch origin article") && !strstr(text, "quick brown fox"),
              "page text leaked into a failure: %s", text);
}

Test(lookup, article_page_is_ok_with_clean_text)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/page");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    assert_article(text);
    cr_assert_gt(hx_utf8_len(text), 400);
    free(text);
    hx_response_free(&r);
}

/* A label nothing decodes is never guessed: the page is unusable and the
 * detail names the label, through the real broker and worker. */
Test(lookup, unsupported_charset_is_unusable_with_the_label_named)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/charset?label=x-klingon");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e =
        tc_expect_one(false, url, "unusable_content", 200, "unsupported charset 'x-klingon'");
    char *text = hx_check_tool_result(&r, &e);
    assert_failure_text(text);
    cr_assert(strstr(text, "unsupported charset 'x-klingon'"), "%s", text);
    free(text);
    hx_response_free(&r);
}

Test(lookup, must_contain_present_is_ok)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/page");
    hx_response r = tc_lookup(&t, url, ", \"must_contain\": \"verifetch origin article\"");
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

Test(lookup, must_contain_missing_is_unusable)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/page");
    hx_response r = tc_lookup(&t, url, ", \"must_contain\": \"zebra crossing\"");
    hx_receipt_expect e =
        tc_expect_one(false, url, "unusable_content", 200, "required text not found");
    char *text = hx_check_tool_result(&r, &e);
    assert_failure_text(text);
    free(text);
    hx_response_free(&r);
}

/* must_contain is judged on the extracted text, not on the raw HTML. */
Test(lookup, must_contain_only_in_script_is_not_found)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/page");
    hx_response r = tc_lookup(&t, url, ", \"must_contain\": \"SCRIPT_MARKER_9c2e\"");
    hx_receipt_expect e =
        tc_expect_one(false, url, "unusable_content", 200, "required text not found");
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

/* Folded by default (case, Unicode forms, quotes, dashes, spaces); "exact"
 * keeps the old byte match. */
Test(lookup, must_contain_folds_case_unless_exact)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/page");
    hx_receipt_expect ok = tc_expect_one(true, url, "ok", 200, "usable content");
    hx_response r = tc_lookup(&t, url, ", \"must_contain\": \"VERIFETCH \\u00a0 ORIGIN ARTICLE\"");
    free(hx_check_tool_result(&r, &ok));
    hx_response_free(&r);
    r = tc_lookup(&t, url, ", \"must_contain\": \"VERIFETCH ORIGIN ARTICLE\", \"must_contain_mode\": \"exact\"");
    hx_receipt_expect e =
        tc_expect_one(false, url, "unusable_content", 200, "required text not found");
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

Test(lookup, interstitial_is_unusable)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/interstitial");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "unusable_content", 200, NULL);
    e.attempts[0].detail_all[0] = "wall bot_challenge: ";
    e.attempts[0].wall = "bot_challenge";
    char *text = hx_check_tool_result(&r, &e);
    assert_failure_text(text);
    cr_assert(!hx_contains_ci(text, "enable javascript"), "wall text leaked: %s", text);
    free(text);
    hx_response_free(&r);
}

Test(lookup, short_page_is_too_short_by_default)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/short");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "unusable_content", 200,
                                        "wall too_short: 4 < 40 characters of main content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(!strstr(text, "tiny"), "page text leaked into a failure: %s", text);
    free(text);
    hx_response_free(&r);
}

Test(lookup, min_chars_is_honoured)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/short");
    hx_response r = tc_lookup(&t, url, ", \"min_chars\": 5");
    hx_receipt_expect e = tc_expect_one(false, url, "unusable_content", 200,
                                        "wall too_short: 4 < 5 characters of main content");
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);

    r = tc_lookup(&t, url, ", \"min_chars\": 0");
    e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert_str_eq(text, "tiny");
    cr_assert_eq(json_integer_value(json_object_get(hx_receipt(&r), "content_chars")), 4);
    free(text);
    hx_response_free(&r);
}

Test(lookup, image_is_not_text)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/image");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "unusable_content", 200,
                                        "content type 'image/png' is not text");
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

Test(lookup, not_found_is_http_error)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/404");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "http_error", 404, "HTTP 404");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(!strstr(text, "Not Found"), "error page text leaked: %s", text);
    free(text);
    hx_response_free(&r);
}

Test(lookup, server_error_is_http_error)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/500");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "http_error", 500, "HTTP 500");
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

Test(lookup, gzip_page_is_decoded)
{
    tc_start(&t, NULL);
    char plain_url[512];
    snprintf(plain_url, sizeof plain_url, "%s", tc_url(&t, "/page"));
    hx_response plain = tc_lookup(&t, plain_url, NULL);
    hx_receipt_expect e = tc_expect_one(true, plain_url, "ok", 200, "usable content");
    char *plain_text = hx_check_tool_result(&plain, &e);

    const char *url = tc_url(&t, "/gzip");
    hx_response r = tc_lookup(&t, url, NULL);
    e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert_str_eq(text, plain_text, "gzip-encoded page must read like the plain one");
    free(text);
    free(plain_text);
    hx_response_free(&r);
    hx_response_free(&plain);
}

Test(lookup, json_page_is_text)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/json");
    hx_response r = tc_lookup(&t, url, ", \"must_contain\": \"verifetch json content\"");
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

/* What the worker actually sent: one GET for the path, Host naming the origin,
 * and no credential of any kind on a direct fetch. */
Test(lookup, direct_request_is_plain_get)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/echo?q=1");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "GET /echo?q=1 HTTP/1.1"), "request line: %s", text);
    char host[96];
    snprintf(host, sizeof host, "host: 127.0.0.1:%d", t.origin.port);
    cr_assert(hx_contains_ci(text, host), "Host header: %s", text);
    cr_assert(!hx_contains_ci(text, "authorization") && !hx_contains_ci(text, "cookie"),
              "direct fetch carried credentials: %s", text);
    cr_assert_eq(hx_origin_connections(&t.origin), 1, "exactly one connection to the origin");
    free(text);
    hx_response_free(&r);
}

Test(lookup, slow_origin_within_timeout_is_ok)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/slow?ms=400");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    free(hx_check_tool_result(&r, &e));
    cr_assert_geq(r.elapsed_ms, 400.0, "answer came before the origin did");
    hx_response_free(&r);
}

Test(lookup, large_body_under_cap_is_whole)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/big?bytes=100000");
    hx_response r = tc_lookup(&t, url, ", \"max_chars\": 1000000");
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    size_t n = hx_utf8_len(text);
    cr_assert(n >= 99990 && n <= 100000, "text of a 100000-byte plain page has %zu chars", n);
    free(text);
    hx_response_free(&r);
}

static json_int_t receipt_int(const hx_response *r, const char *field)
{
    json_t *receipt = json_object_get(json_array_get(json_object_get(r->json, "content"), 0), "json");
    json_t *v = json_object_get(receipt, field);
    cr_assert(json_is_integer(v), "receipt.%s is not an integer: %s", field, r->body);
    return json_integer_value(v);
}

/* The default page is 20000 characters; next_start_index continues it, and
 * the same request cuts at the same place every time. */
Test(lookup, large_page_is_paginated_with_stable_cuts)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/big?bytes=100000");
    hx_response first = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text1 = hx_check_tool_result(&first, &e);
    json_t *receipt = json_object_get(json_array_get(json_object_get(first.json, "content"), 0), "json");
    cr_assert(json_is_true(json_object_get(receipt, "truncated")), "a 100000-char page is cut: %s", first.body);
    json_int_t next = receipt_int(&first, "next_start_index");
    cr_assert(next > 15000 && next <= 20000, "first cut near max_chars, got %lld", (long long)next);
    cr_assert(receipt_int(&first, "total_chars") >= 99990, "total_chars counts the whole page");
    cr_assert(strstr(text1, "start_index") != NULL, "a truncated page ends with a continuation hint");

    hx_response again = tc_lookup(&t, url, NULL);
    cr_assert_eq(receipt_int(&again, "next_start_index"), next, "the same page cuts at the same place");

    char extra[64];
    snprintf(extra, sizeof extra, ", \"start_index\": %lld", (long long)next);
    hx_response second = tc_lookup(&t, url, extra);
    char *text2 = hx_check_tool_result(&second, &e);
    cr_assert_eq(receipt_int(&second, "start_index"), next);
    cr_assert(receipt_int(&second, "next_start_index") > next, "the second slice moves on");
    cr_assert(text2[0] != '\n' && text2[0] != ' ', "a slice starts on text, not a break: %.40s", text2);
    free(text1);
    free(text2);
    hx_response_free(&first);
    hx_response_free(&again);
    hx_response_free(&second);
}

static void small_body_cap(hx_broker_opts *o) { o->max_body_bytes = 65536; }

Test(lookup, body_over_cap_is_transport_error)
{
    tc_start(&t, small_body_cap);
    const char *url = tc_url(&t, "/big?bytes=300000");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "transport_error", HX_ANY, NULL);
    e.attempts[0].detail_any[0] = "too large";
    e.attempts[0].detail_any[1] = "size";
    e.attempts[0].detail_any[2] = "limit";
    e.attempts[0].detail_any[3] = "exceed";
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(!strstr(text, "verifetch big body"), "page text leaked: %.200s", text);
    free(text);
    hx_response_free(&r);
}

static void check_clamp(const char *extra, int want)
{
    const char *url = tc_url(&t, "/page");
    hx_response r = tc_lookup(&t, url, extra);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    e.max_attempts = want;
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

Test(lookup, max_attempts_is_clamped_to_ceiling)
{
    tc_start(&t, NULL);
    check_clamp(", \"max_attempts\": 99", TC_CEILING);
    check_clamp(", \"max_attempts\": 2", 2);
    check_clamp(", \"max_attempts\": 0", 1);
    check_clamp(", \"max_attempts\": -3", 1);
}

Test(lookup, page_text_is_redacted)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/secret-page");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(!strstr(r.body, "AKIAIOSFODNN7EXAMPLE"), "AWS key id reached the client: %s", text);
    cr_assert(strstr(text, "[REDACTED]"), "no redaction marker: %s", text);
    cr_assert(strstr(text, "Authentication: required."), "ordinary prose was redacted: %s", text);
    free(text);
    hx_response_free(&r);
}

Test(lookup, receipt_url_is_redacted)
{
    tc_start(&t, NULL);
    char url[600];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/page?api_key=sk9Zq7secretvalue42&lang=en",
             t.origin.port);
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(true, NULL, "ok", 200, "usable content");
    free(hx_check_tool_result(&r, &e));
    cr_assert(!strstr(r.body, "sk9Zq7secretvalue42"), "query secret reached the client: %s", r.body);
    const char *rurl = json_string_value(json_object_get(hx_receipt(&r), "url"));
    cr_assert(strstr(rurl, "/page?") && strstr(rurl, "lang=en"), "receipt url mangled: %s", rurl);
    hx_response_free(&r);
}

static void no_providers(hx_broker_opts *o) { o->providers = ""; }

Test(lookup, tenant_without_providers_fails_closed)
{
    tc_start(&t, no_providers);
    const char *url = tc_url(&t, "/page");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e;
    memset(&e, 0, sizeof e);
    e.ok = false;
    e.url = url;
    e.max_attempts = -1;
    e.ceiling = TC_CEILING;
    e.providers_available = 0;
    e.failure_reason = "no_providers_configured";
    e.n_attempts = 0;
    free(hx_check_tool_result(&r, &e));
    cr_assert_eq(hx_origin_connections(&t.origin), 0, "no provider, yet the origin was contacted");
    hx_response_free(&r);
}
