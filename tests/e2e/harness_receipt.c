/* E2E harness: assertions over the whole ToolResult and its receipt
 * (verified_web_lookup.receipt/v1), expected values plus the contract's
 * invariants (attempts == log length, ok <=> failure_reason null, ...). */
#include "harness_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <criterion/criterion.h>

static const char *const outcomes[] = {
    "ok", "transport_error", "http_error", "unusable_content", "malformed_response", NULL,
};
static const char *const failure_reasons[] = {
    "no_providers_configured", "all_providers_failed", "attempt_budget_exhausted", NULL,
};

bool hx_contains_ci(const char *hay, const char *needle)
{
    if (!hay || !needle)
        return false;
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (strncasecmp(p, needle, n) == 0)
            return true;
    return n == 0;
}

size_t hx_utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

json_t *hx_receipt(const hx_response *r)
{
    json_t *content = json_object_get(r->json, "content");
    return json_object_get(json_array_get(content, 0), "json");
}

/* Required member of a given JSON type, or abort with the whole body. */
static json_t *member(const hx_response *r, json_t *obj, const char *key, json_type t1,
                      json_type t2)
{
    json_t *v = json_object_get(obj, key);
    cr_assert_not_null(v, "receipt member '%s' missing; body: %s", key, r->body);
    cr_assert(json_typeof(v) == t1 || json_typeof(v) == t2,
              "member '%s' has JSON type %d; body: %s", key, (int)json_typeof(v), r->body);
    return v;
}

static bool is_true_json(json_t *v) { return json_is_true(v); }

static void check_attempt(const hx_response *r, json_t *entry, size_t i,
                          const hx_attempt_expect *x)
{
    cr_assert(json_is_object(entry), "attempts_log[%zu] not an object; body: %s", i, r->body);
    const char *provider = json_string_value(member(r, entry, "provider", JSON_STRING, JSON_STRING));
    const char *outcome = json_string_value(member(r, entry, "outcome", JSON_STRING, JSON_STRING));
    json_t *status = member(r, entry, "http_status", JSON_INTEGER, JSON_NULL);
    const char *detail = json_string_value(member(r, entry, "detail", JSON_STRING, JSON_STRING));
    json_t *wall = member(r, entry, "wall", JSON_STRING, JSON_NULL);

    cr_assert(in_list(outcome, outcomes), "attempts_log[%zu].outcome '%s' not in the enum", i, outcome);
    cr_assert(detail[0] != '\0', "attempts_log[%zu].detail is empty; body: %s", i, r->body);
    if (x->provider)
        cr_assert_str_eq(provider, x->provider, "attempts_log[%zu].provider; body: %s", i, r->body);
    if (x->outcome)
        cr_assert_str_eq(outcome, x->outcome, "attempts_log[%zu].outcome (detail '%s'); body: %s",
                         i, detail, r->body);
    if (x->http_status == HX_NULL)
        cr_assert(json_is_null(status), "attempts_log[%zu].http_status should be null; body: %s",
                  i, r->body);
    else if (x->http_status != HX_ANY)
        cr_assert(json_is_integer(status) && json_integer_value(status) == x->http_status,
                  "attempts_log[%zu].http_status should be %d; body: %s", i, x->http_status,
                  r->body);
    if (x->detail)
        cr_assert_str_eq(detail, x->detail, "attempts_log[%zu].detail; body: %s", i, r->body);
    if (x->wall)
        cr_assert(json_is_string(wall) && strcmp(json_string_value(wall), x->wall) == 0,
                  "attempts_log[%zu].wall should be '%s' (detail '%s'); body: %s", i, x->wall, detail, r->body);
    else if (strcmp(outcome, "ok") == 0)
        cr_assert(json_is_null(wall), "attempts_log[%zu].wall of an ok attempt must be null; body: %s", i, r->body);
    for (size_t k = 0; k < 4 && x->detail_all[k]; k++)
        cr_assert(hx_contains_ci(detail, x->detail_all[k]),
                  "attempts_log[%zu].detail '%s' lacks '%s'", i, detail, x->detail_all[k]);
    if (x->detail_any[0]) {
        bool any = false;
        for (size_t k = 0; k < 4 && x->detail_any[k]; k++)
            any = any || hx_contains_ci(detail, x->detail_any[k]);
        cr_assert(any, "attempts_log[%zu].detail '%s' names none of '%s'/'%s'/...", i, detail,
                  x->detail_any[0], x->detail_any[1] ? x->detail_any[1] : "");
    }
}

static size_t distinct_providers(json_t *log)
{
    size_t n = 0, i, j;
    for (i = 0; i < json_array_size(log); i++) {
        const char *p = json_string_value(json_object_get(json_array_get(log, i), "provider"));
        for (j = 0; j < i; j++) {
            const char *q = json_string_value(json_object_get(json_array_get(log, j), "provider"));
            if (p && q && strcmp(p, q) == 0)
                break;
        }
        if (j == i)
            n++;
    }
    return n;
}

static void check_tool_result_shape(const hx_response *r, bool ok)
{
    cr_assert_eq(r->status, 200, "lookup HTTP status %ld (curl %d); body: %s", r->status,
                 r->curl_code, r->body);
    cr_assert(json_is_object(r->json), "lookup body is not a JSON object: %s", r->body);
    const char *key;
    json_t *v;
    json_object_foreach(r->json, key, v) {
        cr_assert(strcmp(key, "status") == 0 || strcmp(key, "content") == 0 ||
                      strcmp(key, "toolUseId") == 0,
                  "unexpected ToolResult member '%s'; body: %s", key, r->body);
    }
    const char *status = json_string_value(json_object_get(r->json, "status"));
    cr_assert_not_null(status, "ToolResult.status missing; body: %s", r->body);
    cr_assert_str_eq(status, ok ? "success" : "error", "ToolResult.status; body: %s", r->body);
    json_t *content = json_object_get(r->json, "content");
    cr_assert(json_is_array(content) && json_array_size(content) == 2,
              "content must be exactly [json, text]; body: %s", r->body);
    json_t *b0 = json_array_get(content, 0), *b1 = json_array_get(content, 1);
    cr_assert(json_is_object(b0) && json_object_size(b0) == 1 &&
                  json_is_object(json_object_get(b0, "json")),
              "content[0] must be {\"json\": {...}}; body: %s", r->body);
    cr_assert(json_is_object(b1) && json_object_size(b1) == 1 &&
                  json_is_string(json_object_get(b1, "text")),
              "content[1] must be {\"text\": \"...\"}; body: %s", r->body);
}

char *hx_check_tool_result(const hx_response *r, const hx_receipt_expect *e)
{
    if (getenv("VERIFETCH_E2E_TRACE"))   /* debugging aid: show every answer checked */
        fprintf(stderr, "e2e answer: %.600s\n", r->body);
    check_tool_result_shape(r, e->ok);
    json_t *rc = hx_receipt(r);
    const char *text = json_string_value(json_object_get(json_array_get(
        json_object_get(r->json, "content"), 1), "text"));

    const char *schema = json_string_value(member(r, rc, "schema", JSON_STRING, JSON_STRING));
    cr_assert_str_eq(schema, "verified_web_lookup.receipt/v1");
    json_t *ok = member(r, rc, "ok", JSON_TRUE, JSON_FALSE);
    const char *url = json_string_value(member(r, rc, "url", JSON_STRING, JSON_STRING));
    json_int_t attempts = json_integer_value(member(r, rc, "attempts", JSON_INTEGER, JSON_INTEGER));
    json_int_t max_attempts =
        json_integer_value(member(r, rc, "max_attempts", JSON_INTEGER, JSON_INTEGER));
    json_int_t available =
        json_integer_value(member(r, rc, "providers_available", JSON_INTEGER, JSON_INTEGER));
    json_t *used = member(r, rc, "provider_used", JSON_STRING, JSON_NULL);
    json_t *fallback = member(r, rc, "fallback_used", JSON_TRUE, JSON_FALSE);
    json_t *reason = member(r, rc, "failure_reason", JSON_STRING, JSON_NULL);
    json_int_t chars =
        json_integer_value(member(r, rc, "content_chars", JSON_INTEGER, JSON_INTEGER));
    json_t *log = member(r, rc, "attempts_log", JSON_ARRAY, JSON_ARRAY);
    json_t *thin = member(r, rc, "thin", JSON_TRUE, JSON_FALSE);

    cr_assert_eq(is_true_json(ok), e->ok, "receipt.ok; body: %s", r->body);
    if (e->url)
        cr_assert_str_eq(url, e->url, "receipt.url; body: %s", r->body);
    cr_assert_eq(available, e->providers_available, "providers_available; body: %s", r->body);
    if (e->max_attempts >= 0)
        cr_assert_eq(max_attempts, e->max_attempts, "max_attempts; body: %s", r->body);
    if (e->ceiling > 0)
        cr_assert(max_attempts >= 1 && max_attempts <= e->ceiling,
                  "max_attempts %lld outside [1, %d]", (long long)max_attempts, e->ceiling);
    cr_assert_eq((size_t)attempts, json_array_size(log), "attempts != len(attempts_log); body: %s",
                 r->body);
    cr_assert_eq((size_t)attempts, e->n_attempts, "attempts; body: %s", r->body);
    cr_assert(attempts <= max_attempts && attempts <= available,
              "attempts exceed the budget min(max_attempts, providers); body: %s", r->body);
    cr_assert_eq(is_true_json(fallback), distinct_providers(log) > 1,
                 "fallback_used must mean 'more than one provider attempted'; body: %s", r->body);
    for (size_t i = 0; i < e->n_attempts; i++)
        check_attempt(r, json_array_get(log, i), i, &e->attempts[i]);

    if (e->ok) {
        cr_assert(json_is_null(reason), "failure_reason must be null when ok; body: %s", r->body);
        cr_assert(json_is_string(used), "provider_used must be set when ok; body: %s", r->body);
        json_t *last = json_array_get(log, json_array_size(log) - 1);
        cr_assert_str_eq(json_string_value(json_object_get(last, "outcome")), "ok");
        cr_assert_str_eq(json_string_value(used),
                         json_string_value(json_object_get(last, "provider")),
                         "provider_used must be the provider of the ok attempt");
        cr_assert(strncmp(text, "LOOKUP FAILED:", 14) != 0, "success text looks like a failure");
        cr_assert_gt(chars, 0);
        cr_assert_eq(is_true_json(thin), chars < 500, "thin must mean content_chars < 500; body: %s", r->body);
        cr_assert_eq((size_t)chars, hx_utf8_len(text),
                     "content_chars %lld != characters in the text block (%zu); body: %s",
                     (long long)chars, hx_utf8_len(text), r->body);
    } else {
        cr_assert(json_is_string(reason), "failure_reason must be set on failure; body: %s",
                  r->body);
        cr_assert(in_list(json_string_value(reason), failure_reasons), "failure_reason '%s'",
                  json_string_value(reason));
        if (e->failure_reason)
            cr_assert_str_eq(json_string_value(reason), e->failure_reason,
                             "failure_reason; body: %s", r->body);
        cr_assert(json_is_null(used), "provider_used must be null on failure; body: %s", r->body);
        cr_assert_eq(chars, 0, "content_chars must be 0 on failure; body: %s", r->body);
        cr_assert(!is_true_json(thin), "thin must be false on failure; body: %s", r->body);
        cr_assert(strncmp(text, "LOOKUP FAILED:", 14) == 0,
                  "failure text must start with 'LOOKUP FAILED:'; got '%s'", text);
        cr_assert(strstr(text, json_string_value(reason)) != NULL,
                  "failure text must name failure_reason '%s'; got '%s'",
                  json_string_value(reason), text);
        for (size_t i = 0; i < json_array_size(log); i++)
            cr_assert_str_neq(json_string_value(json_object_get(json_array_get(log, i), "outcome")),
                              "ok", "a failed lookup cannot contain an ok attempt");
    }
    return strdup(text);
}
