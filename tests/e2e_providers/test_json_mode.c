/* E2E: an http_api provider declared response = { mode = "json"; pointer }.
 * The worker extracts the string at the pointer; anything else the provider
 * sends (HTML, a number at the pointer) is malformed_response in a receipt
 * that stays machine-readable, never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <curl/curl.h>

#include "provider_env.h"

TestSuite(json_mode, .init = pe_setup, .fini = pe_teardown, .timeout = 30);

#define TARGET_URL "https://example.test/api/article"

static hx_origin origin;
static hx_broker broker;

static void start(const char *path, const char *pointer)
{
    hx_origin_start(&origin, NULL, NULL);
    char endpoint[256], response[160];
    hx_origin_url(&origin, false, path, endpoint, sizeof endpoint);
    snprintf(response, sizeof response, "response = { mode = \"json\"; pointer = \"%s\"; };",
             pointer);
    char *provider = pe_http_api_provider("jsonapi", endpoint, response);
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    o.providers = provider;
    hx_broker_start(&broker, &o);
    free(provider);
}

typedef struct {
    size_t used;
    char buf[16384];
} small_body;

static size_t collect(char *data, size_t size, size_t nmemb, void *user)
{
    small_body *b = user;
    size_t n = size * nmemb;
    if (b->used + n >= sizeof b->buf)
        return 0;
    memcpy(b->buf + b->used, data, n);
    b->used += n;
    b->buf[b->used] = '\0';
    return n;
}

/* What the origin's /json holds at pointer, fetched here without the broker. */
static char *expected_content(const char *pointer)
{
    static small_body got;
    memset(&got, 0, sizeof got);
    char url[256];
    hx_origin_url(&origin, false, "/json", url, sizeof url);
    CURL *c = curl_easy_init();
    cr_assert_not_null(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &got);
    cr_assert_eq(curl_easy_perform(c), CURLE_OK, "cannot fetch %s directly", url);
    curl_easy_cleanup(c);
    json_error_t err;
    json_t *root = json_loads(got.buf, 0, &err);
    cr_assert_not_null(root, "origin /json is not JSON: %s", got.buf);
    json_t *at = root;
    char *copy = strdup(pointer + 1);
    for (char *save = NULL, *tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save))
        at = json_object_get(at, tok);
    free(copy);
    cr_assert(json_is_string(at), "origin /json has no string at %s", pointer);
    char *out = strdup(json_string_value(at));
    json_decref(root);
    return out;
}

static hx_receipt_expect expect_one(bool ok, const char *outcome, const char *detail)
{
    hx_receipt_expect e = {
        .ok = ok, .url = TARGET_URL, .max_attempts = -1, .ceiling = 4,
        .providers_available = 1, .n_attempts = 1,
        .failure_reason = ok ? NULL : "all_providers_failed",
        .attempts = { { .provider = "jsonapi", .outcome = outcome, .http_status = 200,
                        .detail = detail } },
    };
    return e;
}

static void assert_machine_readable_failure(const hx_response *r, const char *text)
{
    cr_assert_str_eq(json_string_value(json_object_get(r->json, "status")), "error");
    cr_assert(strstr(text, "malformed_response"), "failure line must name the outcome: %s", text);
    cr_assert(!strstr(text, "verifetch origin article") && !strstr(text, "verifetch json content"),
              "provider content in a failure: %s", text);
}

Test(json_mode, string_at_pointer_is_the_page_text)
{
    start("/json", "/data/content");
    char *want = expected_content("/data/content");
    hx_response r = pe_lookup(&broker, TARGET_URL, NULL);
    hx_receipt_expect e = expect_one(true, "ok", "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert_str_eq(text, want, "the text must be exactly the string at the pointer");
    cr_assert(!strstr(text, "\"meta\"") && !strchr(text, '{'), "JSON framing in the text: %s", text);
    free(want);
    free(text);
    hx_response_free(&r);
}

Test(json_mode, html_where_json_was_declared_is_malformed)
{
    start("/page", "/data/content");
    hx_response r = pe_lookup(&broker, TARGET_URL, NULL);
    hx_receipt_expect e = expect_one(false, "malformed_response", "response is not JSON");
    char *text = hx_check_tool_result(&r, &e);
    assert_machine_readable_failure(&r, text);
    free(text);
    hx_response_free(&r);
}

Test(json_mode, number_at_pointer_is_malformed)
{
    start("/json", "/meta/n");
    hx_response r = pe_lookup(&broker, TARGET_URL, NULL);
    hx_receipt_expect e = expect_one(false, "malformed_response", NULL);
    e.attempts[0].detail_all[0] = "/meta/n";
    e.attempts[0].detail_all[1] = "not a string";
    char *text = hx_check_tool_result(&r, &e);
    assert_machine_readable_failure(&r, text);
    free(text);
    hx_response_free(&r);
}

Test(json_mode, missing_pointer_is_malformed)
{
    start("/json", "/data/nothing_here");
    hx_response r = pe_lookup(&broker, TARGET_URL, NULL);
    hx_receipt_expect e = expect_one(false, "malformed_response", NULL);
    e.attempts[0].detail_all[0] = "/data/nothing_here";
    e.attempts[0].detail_all[1] = "not found";
    char *text = hx_check_tool_result(&r, &e);
    assert_machine_readable_failure(&r, text);
    free(text);
    hx_response_free(&r);
}
