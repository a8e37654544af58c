/* E2E: fallback across providers as the seed describes it, through the real
 * broker: the seed's own example receipt, every provider failing, the attempt
 * budget running out first, and a tenant with no providers at all. Providers
 * are http_api endpoints and a direct provider, all on one loopback origin
 * (tests/origin/origin.py), whose log tells which paths were fetched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "provider_env.h"

TestSuite(fallback, .init = pe_setup, .fini = pe_teardown, .timeout = 30);

static hx_origin origin;
static hx_broker broker;
static char target[256];

/* http_api provider <name> whose endpoint is <path> on the origin. */
static char *api(const char *name, const char *path)
{
    char endpoint[256];
    hx_origin_url(&origin, false, path, endpoint, sizeof endpoint);
    return pe_http_api_provider(name, endpoint, NULL);
}

static char *direct(const char *name)
{
    char *out = NULL;
    cr_assert(asprintf(&out, "{ name = \"%s\"; kind = \"direct\"; }", name) > 0);
    return out;
}

/* Origin + broker with the given providers (entries freed here); target = origin's path. */
static void start(const char *target_path, char *p1, char *p2, char *p3)
{
    char *list = pe_provider_list(p1, p2, p3, NULL);
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    o.providers = list;
    hx_broker_start(&broker, &o);
    hx_origin_url(&origin, false, target_path, target, sizeof target);
    free(list);
    free(p1);
    free(p2);
    free(p3);
}

static bool origin_served(const char *request_line_prefix)
{
    char *log = hx_read_file(origin.log_path, NULL);
    bool yes = log && strstr(log, request_line_prefix);
    free(log);
    return yes;
}

/* Failure text: names the outcome, carries none of the pages the providers got
 * (a detail may quote the marker that matched, "'just a moment'", not the page). */
static void assert_no_page_text(const char *text)
{
    static const char *const pages[] = {
        "verifetch origin article", "quick brown fox", "internal error at the origin",
        /* (the detail may quote the classifier's own phrase, not the page's
         * sentence with its full stop) */
        "Just a moment...", "and cookies to continue.", "tiny", NULL,
    };
    cr_assert(strncmp(text, "LOOKUP FAILED:", 14) == 0, "text: %s", text);
    for (size_t i = 0; pages[i]; i++)
        cr_assert(!hx_contains_ci(text, pages[i]), "page text '%s' in a failure: %s", pages[i],
                  text);
}

/* The seed's example: primary answers 200 with an interstitial, backup has the page. */
Test(fallback, seed_example_receipt)
{
    hx_origin_start(&origin, NULL, NULL);
    start("/page", api("primary", "/interstitial"), direct("backup"), NULL);
    hx_response r = pe_lookup(&broker, target, ", \"max_attempts\": 2");
    hx_receipt_expect e = {
        .ok = true, .url = target, .max_attempts = 2, .ceiling = 4,
        .providers_available = 2, .n_attempts = 2,
        .attempts = {
            { .provider = "primary", .outcome = "unusable_content", .http_status = 200,
              .detail_all = { "wall bot_challenge: " }, .wall = "bot_challenge" },
            { .provider = "backup", .outcome = "ok", .http_status = 200,
              .detail = "usable content" },
        },
    };
    char *text = hx_check_tool_result(&r, &e);
    json_t *rc = hx_receipt(&r);
    cr_assert_str_eq(json_string_value(json_object_get(rc, "provider_used")), "backup");
    cr_assert(json_is_true(json_object_get(rc, "fallback_used")), "body: %s", r.body);
    cr_assert(json_is_null(json_object_get(rc, "failure_reason")), "body: %s", r.body);
    cr_assert_str_eq(json_string_value(json_object_get(r.json, "status")), "success");
    cr_assert(strstr(text, "verifetch origin article"), "backup's page missing: %s", text);
    cr_assert(!hx_contains_ci(text, "just a moment"), "primary's wall in the text: %s", text);
    cr_assert(origin_served("REQ GET /interstitial?url="), "primary was never asked");
    cr_assert(origin_served("REQ GET /page HTTP/1.1"), "backup never fetched the page");
    free(text);
    hx_response_free(&r);
}

Test(fallback, all_providers_failing_is_an_error_without_page_text)
{
    hx_origin_start(&origin, NULL, NULL);
    start("/short", api("first", "/500"), direct("second"), NULL);
    hx_response r = pe_lookup(&broker, target, ", \"max_attempts\": 2");
    hx_receipt_expect e = {
        .ok = false, .url = target, .max_attempts = 2, .ceiling = 4,
        .providers_available = 2, .n_attempts = 2, .failure_reason = "all_providers_failed",
        .attempts = {
            { .provider = "first", .outcome = "http_error", .http_status = 500 },
            { .provider = "second", .outcome = "unusable_content", .http_status = 200,
              .detail = "wall too_short: 4 < 40 characters of main content", .wall = "too_short" },
        },
    };
    char *text = hx_check_tool_result(&r, &e);
    json_t *rc = hx_receipt(&r);
    cr_assert_str_eq(json_string_value(json_object_get(r.json, "status")), "error");
    cr_assert(json_is_false(json_object_get(rc, "ok")));
    cr_assert(json_is_null(json_object_get(rc, "provider_used")), "body: %s", r.body);
    cr_assert(json_is_true(json_object_get(rc, "fallback_used")),
              "two providers were attempted: fallback_used must be true; body: %s", r.body);
    assert_no_page_text(text);
    free(text);
    hx_response_free(&r);
}

/* Three providers, two attempts allowed: the third (which would succeed) is never asked. */
Test(fallback, budget_smaller_than_providers_is_exhausted)
{
    hx_origin_start(&origin, NULL, NULL);
    start("/page", api("a", "/500"), api("b", "/interstitial"), direct("c"));
    hx_response r = pe_lookup(&broker, target, ", \"max_attempts\": 2");
    hx_receipt_expect e = {
        .ok = false, .url = target, .max_attempts = 2, .ceiling = 4,
        .providers_available = 3, .n_attempts = 2, .failure_reason = "attempt_budget_exhausted",
        .attempts = {
            { .provider = "a", .outcome = "http_error", .http_status = 500 },
            { .provider = "b", .outcome = "unusable_content", .http_status = 200,
              .detail_all = { "wall bot_challenge: " }, .wall = "bot_challenge" },
        },
    };
    char *text = hx_check_tool_result(&r, &e);
    cr_assert_str_eq(json_string_value(json_object_get(r.json, "status")), "error");
    cr_assert(json_is_null(json_object_get(hx_receipt(&r), "provider_used")), "body: %s", r.body);
    assert_no_page_text(text);
    cr_assert(origin_served("REQ GET /interstitial?url="), "provider b was never asked");
    cr_assert(!origin_served("REQ GET /page "), "provider c was asked beyond the budget");
    free(text);
    hx_response_free(&r);
}

Test(fallback, tenant_without_providers_makes_no_attempt)
{
    hx_origin_start(&origin, NULL, NULL);
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    o.providers = "";   /* providers = ( ); */
    hx_broker_start(&broker, &o);
    hx_origin_url(&origin, false, "/page", target, sizeof target);
    hx_response r = pe_lookup(&broker, target, NULL);
    hx_receipt_expect e = {
        .ok = false, .url = target, .max_attempts = -1, .ceiling = 4,
        .providers_available = 0, .n_attempts = 0, .failure_reason = "no_providers_configured",
    };
    char *text = hx_check_tool_result(&r, &e);
    json_t *rc = hx_receipt(&r);
    cr_assert_str_eq(json_string_value(json_object_get(r.json, "status")), "error");
    cr_assert(json_is_false(json_object_get(rc, "fallback_used")), "body: %s", r.body);
    cr_assert(json_is_null(json_object_get(rc, "provider_used")), "body: %s", r.body);
    assert_no_page_text(text);
    cr_assert_eq(hx_origin_connections(&origin), 0, "a lookup without providers reached the origin");
    free(text);
    hx_response_free(&r);
}
