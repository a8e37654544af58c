/* E2E: the shipped example configs for paid fetch APIs
 * (packaging/examples/providers/<name>.conf), each run as written except for its
 * base URL and key file, against a loopback fake of that API
 * (paid_api_fakes.py) that rejects a request of the wrong shape. Also: the
 * credential proxy's guarantees hold for POST (key only at the provider, an
 * echoed key masked, a hostile target confined to one JSON string value), and
 * for HTTP Basic (Zyte) too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "provider_env.h"

TestSuite(paid_apis, .init = pe_setup, .fini = pe_teardown, .timeout = 30);

#define TARGET_URL "https://example.test/harbour"

static pe_origin origin;
static hx_broker broker;
static char key[96];

typedef enum { KEY_BEARER, KEY_QUERY, KEY_BASIC } key_place;

typedef struct {
    const char *name;       /* example file and provider name */
    const char *real_base;  /* "\"" + what the example's endpoint calls; replaced by the fake's */
    const char *request;    /* the request line the fake must have seen */
    key_place key;          /* where the example puts the key */
} paid_api;

static const paid_api FIRECRAWL = { "firecrawl", "\"https://api.firecrawl.dev", "REQ POST /firecrawl/v1/scrape HTTP/1.0", KEY_BEARER };
static const paid_api TAVILY = { "tavily", "\"https://api.tavily.com", "REQ POST /tavily/extract HTTP/1.0", KEY_BEARER };
static const paid_api JINA = { "jina", "\"https://r.jina.ai", "REQ POST /jina/ HTTP/1.0", KEY_BEARER };
static const paid_api SCRAPINGBEE = { "scrapingbee", "\"https://app.scrapingbee.com", "REQ GET /scrapingbee/api/v1/?url=", KEY_QUERY };
static const paid_api ZYTE = { "zyte", "\"https://api.zyte.com", "REQ POST /zyte/v1/extract HTTP/1.0", KEY_BASIC };
static const paid_api ZYTE_BROWSER = { "zyte-browser", "\"https://api.zyte.com", "REQ POST /zyte-browser/v1/extract HTTP/1.0", KEY_BASIC };

/* s with its one needle replaced by with; malloc'd. */
static char *replace_once(const char *s, const char *needle, const char *with)
{
    const char *at = strstr(s, needle);
    cr_assert(at && !strstr(at + 1, needle), "'%s' must appear exactly once in: %s", needle, s);
    char *out = NULL;
    cr_assert(asprintf(&out, "%.*s%s%s", (int)(at - s), s, with, at + strlen(needle)) > 0);
    return out;
}

/* The example entry as shipped, pointed at the fake and a fresh key file. */
static char *example_provider(const paid_api *api)
{
    char path[PATH_MAX], key_path[PATH_MAX], real_key[PATH_MAX], base[128], key_name[64];
    snprintf(path, sizeof path, "%s/packaging/examples/providers/%s.conf", getenv("VERIFETCH_SOURCE_ROOT"),
             api->name);
    char *text = hx_read_file(path, NULL);
    cr_assert_not_null(text, "cannot read %s", path);
    snprintf(base, sizeof base, "\"http://127.0.0.1:%d/%s", origin.port, api->name);
    snprintf(real_key, sizeof real_key, "/etc/verifetch/keys/%s.key", api->name);
    snprintf(key_name, sizeof key_name, "%s.key", api->name);
    pe_canary_make(key, sizeof key);
    pe_key_file(key_name, key, key_path, sizeof key_path);
    char *a = replace_once(text, api->real_base, base);
    char *b = replace_once(a, real_key, key_path);
    free(text);
    free(a);
    return b;
}

static void start(const paid_api *api)
{
    pe_origin_start(&origin, NULL, 0);
    char *provider = example_provider(api);
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    o.providers = provider;
    hx_broker_start(&broker, &o);
    free(provider);
}

/* POST /v1/lookup for url, JSON-escaped here (the target may hold quotes). */
static hx_response lookup(const char *url)
{
    json_t *req = json_pack("{s:s}", "url", url);
    char *body = json_dumps(req, JSON_COMPACT);
    hx_response r = hx_request(&broker, "POST", "/v1/lookup", body, strlen(body));
    cr_assert_eq(r.status, 200, "lookup HTTP %ld: %s\nbroker stderr: %s", r.status, r.body, hx_broker_log(&broker));
    free(body);
    json_decref(req);
    return r;
}

static char *checked_ok(const hx_response *r, const char *provider, const char *url)
{
    hx_receipt_expect e = {
        .ok = true, .url = url, .max_attempts = -1, .ceiling = 4, .providers_available = 1, .n_attempts = 1,
        .attempts = { { .provider = provider, .outcome = "ok", .http_status = 200, .detail = "usable content" } },
    };
    return hx_check_tool_result(r, &e);
}

/* The one POST body the fake logged, parsed. */
static json_t *logged_body(void)
{
    char *log = pe_origin_log(&origin);
    const char *at = strstr(log, "\nBODY ");
    cr_assert_not_null(at, "the fake logged no POST body: %s", log);
    cr_assert_null(strstr(at + 1, "\nBODY "), "more than one POST reached the fake: %s", log);
    at += 6;
    char *line = strndup(at, strcspn(at, "\n"));
    json_error_t err;
    json_t *body = json_loads(line, JSON_REJECT_DUPLICATES, &err);
    cr_assert_not_null(body, "the POST body is not JSON (%s): %s", err.text, line);
    free(line);
    free(log);
    return body;
}

/* The request the fake saw: its line, and the key only where the example puts it. */
static void assert_request(const paid_api *api)
{
    char *log = pe_origin_log(&origin);
    cr_assert(strstr(log, api->request), "the fake did not see '%s': %s", api->request, log);
    char want[256];
    if (api->key == KEY_BASIC) {
        char *line = pe_basic_header(key);
        snprintf(want, sizeof want, "%s", line);
        free(line);
    } else if (api->key == KEY_BEARER) {
        snprintf(want, sizeof want, "HDR Authorization: Bearer %s\n", key);
    } else {
        snprintf(want, sizeof want, "QRY api_key=%s\n", key);
    }
    cr_assert(strstr(log, want), "the key did not arrive as '%s': %s", want, log);
    const char *auth = strstr(log, "HDR Authorization:");
    cr_assert(!auth || !strstr(auth + 1, "HDR Authorization:"), "more than one Authorization header: %s", log);
    free(log);
}

static void assert_article(const char *text, const char *api, const char *url)
{
    char want[512];
    snprintf(want, sizeof want, "produced by the %s fake for %s", api, url);
    cr_assert(strstr(text, want), "not the %s answer for %s: %s", api, url, text);
    cr_assert(strstr(text, "Second paragraph"), "content cut short: %s", text);
    cr_assert(!strstr(text, "\"success\"") && !strstr(text, "raw_content"), "JSON framing in the text: %s", text);
}

/* Start the example, look TARGET_URL up, and check the answer and the request. */
static char *run_example(const paid_api *api, hx_response *r)
{
    start(api);
    *r = lookup(TARGET_URL);
    char *text = checked_ok(r, api->name, TARGET_URL);
    assert_article(text, api->name, TARGET_URL);
    assert_request(api);
    return text;
}


/* v is the array [s] (the expected value is built and freed here). */
static bool is_one_string_array(const json_t *v, const char *s)
{
    json_t *want = json_pack("[s]", s);
    bool eq = json_equal(v, want);
    json_decref(want);
    return eq;
}

Test(paid_apis, firecrawl_example_scrapes_markdown)
{
    hx_response r;
    char *text = run_example(&FIRECRAWL, &r);
    json_t *body = logged_body();
    cr_assert_str_eq(json_string_value(json_object_get(body, "url")), TARGET_URL);
    cr_assert(is_one_string_array(json_object_get(body, "formats"), "markdown"));
    cr_assert(json_is_true(json_object_get(body, "onlyMainContent")), "booleans stay booleans");
    json_t *timeout = json_object_get(body, "timeout");
    cr_assert(json_is_integer(timeout) && json_integer_value(timeout) > 0 && json_integer_value(timeout) <= 15000,
              "{timeout_ms} must become the attempt's remaining milliseconds as a number");
    cr_assert_eq(json_object_size(body), 4, "the body has exactly the example's members");
    cr_assert_str_eq(json_string_value(json_object_get(hx_receipt(&r), "title")), "Harbour notes",
                     "the title comes from the response's metadata pointer");
    json_decref(body);
    free(text);
    hx_response_free(&r);
}

Test(paid_apis, tavily_example_extracts_raw_content)
{
    hx_response r;
    char *text = run_example(&TAVILY, &r);
    cr_assert_null(json_object_get(hx_receipt(&r), "title"), "no title pointer, no title");
    json_t *body = logged_body();
    cr_assert(is_one_string_array(json_object_get(body, "urls"), TARGET_URL));
    cr_assert_str_eq(json_string_value(json_object_get(body, "extract_depth")), "basic");
    json_t *timeout = json_object_get(body, "timeout");
    cr_assert(json_is_integer(timeout) && json_integer_value(timeout) >= 1 && json_integer_value(timeout) <= 15,
              "{timeout_s} must become whole seconds");
    json_decref(body);
    free(text);
    hx_response_free(&r);
}

Test(paid_apis, tavily_failed_result_is_malformed_not_success)
{
    start(&TAVILY);
    const char *url = "https://example.test/fail-extract";
    hx_response r = lookup(url);
    hx_receipt_expect e = {
        .ok = false, .url = url, .max_attempts = -1, .ceiling = 4, .providers_available = 1, .n_attempts = 1,
        .failure_reason = "all_providers_failed",
        .attempts = { { .provider = "tavily", .outcome = "malformed_response", .http_status = 200,
                        .detail_all = { "/results/0/raw_content", "not found" } } },
    };
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

Test(paid_apis, jina_example_reads_json_content)
{
    hx_response r;
    char *text = run_example(&JINA, &r);
    char *log = pe_origin_log(&origin);
    cr_assert(strstr(log, "HDR Accept: application/json\n"), "static header missing or doubled Accept: %s", log);
    cr_assert(strstr(log, "HDR X-Return-Format: markdown\n"), "static header missing: %s", log);
    cr_assert_null(strstr(log, "HDR Accept: */*"), "the default Accept must yield to the configured one: %s", log);
    free(log);
    json_t *body = logged_body();
    json_t *want = json_pack("{s:s}", "url", TARGET_URL);
    bool same = json_equal(body, want);
    json_decref(want);
    cr_assert(same, "body is {\"url\": target}");
    cr_assert_str_eq(json_string_value(json_object_get(hx_receipt(&r), "title")), "Harbour notes");
    json_decref(body);
    free(text);
    hx_response_free(&r);
}

Test(paid_apis, scrapingbee_example_renders_the_returned_page)
{
    hx_response r;
    char *text = run_example(&SCRAPINGBEE, &r);
    cr_assert(!strstr(text, "<p>"), "the HTML answer must be rendered, not passed through: %s", text);
    char *log = pe_origin_log(&origin);
    cr_assert(strstr(log, "QRY url=" TARGET_URL "\n") && strstr(log, "QRY render_js=false\n"), "%s", log);
    free(log);
    hx_response_free(&r);
    free(text);
}

/* The provider quotes the Authorization header it received in its markdown:
 * the proxy masks the key before the worker, and so the receipt, sees it. */
Test(paid_apis, key_echoed_by_a_post_provider_is_masked)
{
    start(&FIRECRAWL);
    const char *url = "https://example.test/echo-key";
    hx_response r = lookup(url);
    char *text = checked_ok(&r, "firecrawl", url);
    assert_request(&FIRECRAWL);   /* the fake did get the real key... */
    cr_assert(strstr(text, "the request carried credential "), "the echo is missing: %s", text);
    pe_forms forms;
    pe_forms_build(key, &forms);
    const char *form = pe_forms_find(&forms, r.body, r.body_len);
    cr_assert_null(form, "the key (%s) left the broker: %s", form, r.body);   /* ...the caller did not */
    pe_forms_free(&forms);
    free(text);
    hx_response_free(&r);
}

/* A target built to break out of its JSON string, name another endpoint and
 * expand placeholders: it stays one string value, byte for byte, and the
 * request still goes to the configured endpoint. */
Test(paid_apis, hostile_target_cannot_reshape_the_body_or_redirect)
{
    start(&FIRECRAWL);
    const char *url = "https://example.test/x?a=\",\"url\":\"http://127.0.0.1:1/evil\",\"formats\":[\"html\"],"
                      "\"z\":\"{url}{timeout_ms}\\\"}";
    hx_response r = lookup(url);
    json_t *receipt = hx_receipt(&r);
    json_t *attempt = json_array_get(json_object_get(receipt, "attempts_log"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(attempt, "provider")), "firecrawl", "%s", r.body);
    cr_assert_eq(json_integer_value(json_object_get(attempt, "http_status")), 200,
                 "the fake must have accepted the body: %s", r.body);
    json_t *body = logged_body();
    cr_assert_str_eq(json_string_value(json_object_get(body, "url")), url, "the target must be one string value");
    cr_assert(is_one_string_array(json_object_get(body, "formats"), "markdown"), "formats was rewritten");
    cr_assert_eq(json_object_size(body), 4, "the target added members");
    json_decref(body);
    char *log = pe_origin_log(&origin);
    cr_assert(strstr(log, FIRECRAWL.request), "not the configured endpoint: %s", log);
    const char *req = strstr(log, "REQ ");
    cr_assert(req && !strstr(req + 1, "REQ "), "one request, to the endpoint, and no other: %s", log);
    free(log);
    hx_response_free(&r);
}

/* Zyte: HTTP Basic with the key as the user name (built by the proxy), the
 * body {url, <output>: true}, the answer's page in one field. */
static void zyte_example(const paid_api *api, const char *output)
{
    hx_response r;
    char *text = run_example(api, &r);
    cr_assert(!strstr(text, "<p>") && !strstr(text, "statusCode"), "the page must be rendered from its field: %s",
              text);
    cr_assert_str_eq(json_string_value(json_object_get(hx_receipt(&r), "title")), "Harbour notes",
                     "the title comes from the page in the field");
    json_t *body = logged_body();
    json_t *want = json_pack("{s:s, s:b}", "url", TARGET_URL, output, 1);
    bool same = json_equal(body, want);
    json_decref(want);
    char *dump = json_dumps(body, JSON_COMPACT);
    cr_assert(same, "body must be {\"url\": target, \"%s\": true}: %s", output, dump);
    free(dump);
    json_decref(body);
    free(text);
    hx_response_free(&r);
}

Test(paid_apis, zyte_example_decodes_the_base64_page_and_authenticates_with_basic)
{
    zyte_example(&ZYTE, "httpResponseBody");
}

Test(paid_apis, zyte_browser_example_renders_browser_html)
{
    zyte_example(&ZYTE_BROWSER, "browserHtml");
}

/* The Zyte fake quotes the key and the Authorization header it received in
 * the page: raw, as base64 of "key:", and (httpResponseBody) all of it inside
 * the base64 page. No form of either reaches the caller. */
static void zyte_echo_is_masked(const paid_api *api)
{
    start(api);
    const char *url = "https://example.test/echo-key";
    hx_response r = lookup(url);
    char *text = checked_ok(&r, api->name, url);
    assert_request(api);   /* the fake did get the real key... */
    cr_assert(strstr(text, "the request carried credential ") && strstr(text, "Debug: Authorization: Basic "),
              "the echo is missing: %s", text);
    char pair[128];
    snprintf(pair, sizeof pair, "%s:", key);
    pe_forms forms, pair_forms;
    pe_forms_build(key, &forms);
    pe_forms_build(pair, &pair_forms);
    const char *form = pe_forms_find(&forms, r.body, r.body_len);
    cr_assert_null(form, "the key (%s) left the broker: %s", form, r.body);   /* ...the caller did not */
    form = pe_forms_find(&pair_forms, r.body, r.body_len);
    cr_assert_null(form, "the Basic pair (%s) left the broker: %s", form, r.body);
    pe_forms_free(&forms);
    pe_forms_free(&pair_forms);
    free(text);
    hx_response_free(&r);
}

Test(paid_apis, zyte_key_echoed_in_a_base64_page_is_masked)
{
    zyte_echo_is_masked(&ZYTE);
}

Test(paid_apis, zyte_key_echoed_in_browser_html_is_masked)
{
    zyte_echo_is_masked(&ZYTE_BROWSER);
}
