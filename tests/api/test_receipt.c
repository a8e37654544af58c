/* The receipt and ToolResult: the seed's fields with the seed's meanings. */
#include <criterion/criterion.h>
#include <string.h>

#include "broker/judge/receipt.h"

static vf_redactor *redactor(void)
{
    char err[256];
    const char *secrets[] = { "canary-SECRET-1234" };
    vf_redactor *r = vf_redactor_new(secrets, 1, err, sizeof err);
    cr_assert_not_null(r, "%s", err);
    return r;
}

static json_t *receipt_of(json_t *result)
{
    return json_object_get(json_array_get(json_object_get(result, "content"), 0), "json");
}

static const char *text_of(json_t *result)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(result, "content"), 1), "text"));
}

Test(receipt, seed_example_shape_primary_wall_backup_ok)
{
    vf_redactor *r = redactor();
    vf_attempt_record log[2] = {
        { .provider = "primary", .outcome = VF_OUTCOME_UNUSABLE_CONTENT, .http_status = 200,
          .detail = "interstitial page detected ('just a moment')" },
        { .provider = "backup", .outcome = VF_OUTCOME_OK, .http_status = 200, .detail = "usable content" },
    };
    const char *page = "A real page with caf\xc3\xa9 in it.";
    vf_receipt_input in = {
        .url = "https://example.test/strands/tools", .max_attempts = 2, .providers_available = 2,
        .log = log, .n_attempts = 2, .provider_used = "backup", .failure = VF_FAIL_NONE,
        .text = page, .text_len = strlen(page),
    };
    json_t *res = vf_tool_result_build(&in, r);
    cr_assert_not_null(res);
    cr_assert_str_eq(json_string_value(json_object_get(res, "status")), "success");
    json_t *rc = receipt_of(res);
    cr_assert_str_eq(json_string_value(json_object_get(rc, "schema")), "verified_web_lookup.receipt/v1");
    cr_assert(json_is_true(json_object_get(rc, "ok")));
    cr_assert_eq(json_integer_value(json_object_get(rc, "attempts")), 2);
    cr_assert_eq(json_integer_value(json_object_get(rc, "max_attempts")), 2);
    cr_assert_eq(json_integer_value(json_object_get(rc, "providers_available")), 2);
    cr_assert_str_eq(json_string_value(json_object_get(rc, "provider_used")), "backup");
    cr_assert(json_is_true(json_object_get(rc, "fallback_used")));
    cr_assert(json_is_null(json_object_get(rc, "failure_reason")));
    /* Characters, not bytes: the e-acute is one. */
    cr_assert_eq(json_integer_value(json_object_get(rc, "content_chars")), (json_int_t)strlen(page) - 1);
    json_t *a0 = json_array_get(json_object_get(rc, "attempts_log"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(a0, "outcome")), "unusable_content");
    cr_assert_eq(json_integer_value(json_object_get(a0, "http_status")), 200);
    cr_assert_str_eq(json_string_value(json_object_get(a0, "detail")),
                     "interstitial page detected ('just a moment')");
    cr_assert_str_eq(text_of(res), page);
    json_decref(res);
    vf_redactor_free(r);
}

Test(receipt, failure_has_no_page_text_and_a_failure_line)
{
    vf_redactor *r = redactor();
    vf_attempt_record log[2] = {
        { .provider = "a", .outcome = VF_OUTCOME_TRANSPORT_ERROR, .http_status = 0,
          .detail = "connect to 127.0.0.1 port 9 failed: Connection refused" },
        { .provider = "b", .outcome = VF_OUTCOME_HTTP_ERROR, .http_status = 404, .detail = "HTTP 404" },
    };
    vf_receipt_input in = {
        .url = "https://example.test/x", .max_attempts = 2, .providers_available = 2, .log = log,
        .n_attempts = 2, .provider_used = "b", .failure = VF_FAIL_ALL_FAILED,
        .text = "SHOULD NOT APPEAR", .text_len = 17,
    };
    json_t *res = vf_tool_result_build(&in, r);
    cr_assert_str_eq(json_string_value(json_object_get(res, "status")), "error");
    json_t *rc = receipt_of(res);
    cr_assert(json_is_false(json_object_get(rc, "ok")));
    cr_assert(json_is_null(json_object_get(rc, "provider_used")), "provider_used must be null on failure");
    cr_assert(json_is_true(json_object_get(rc, "fallback_used")), "two attempted means fallback_used");
    cr_assert_str_eq(json_string_value(json_object_get(rc, "failure_reason")), "all_providers_failed");
    cr_assert_eq(json_integer_value(json_object_get(rc, "content_chars")), 0);
    json_t *a0 = json_array_get(json_object_get(rc, "attempts_log"), 0);
    cr_assert(json_is_null(json_object_get(a0, "http_status")));
    const char *line = text_of(res);
    cr_assert(strncmp(line, "LOOKUP FAILED:", 14) == 0, "%s", line);
    cr_assert(strstr(line, "all_providers_failed") != NULL);
    char *dump = json_dumps(res, 0);
    cr_assert_null(strstr(dump, "SHOULD NOT APPEAR"));
    free(dump);
    json_decref(res);
    vf_redactor_free(r);
}

Test(receipt, no_providers_and_single_attempt_not_fallback)
{
    vf_redactor *r = redactor();
    vf_receipt_input in = { .url = "http://x/", .max_attempts = 1, .failure = VF_FAIL_NO_PROVIDERS };
    json_t *res = vf_tool_result_build(&in, r);
    json_t *rc = receipt_of(res);
    cr_assert_eq(json_integer_value(json_object_get(rc, "attempts")), 0);
    cr_assert(json_is_false(json_object_get(rc, "fallback_used")));
    cr_assert_str_eq(json_string_value(json_object_get(rc, "failure_reason")), "no_providers_configured");
    cr_assert_eq(json_array_size(json_object_get(rc, "attempts_log")), 0);
    cr_assert(strstr(text_of(res), "no_providers_configured") != NULL);
    json_decref(res);
    vf_redactor_free(r);
}

Test(receipt, url_detail_and_text_are_redacted)
{
    vf_redactor *r = redactor();
    vf_attempt_record log[1] = {
        { .provider = "p", .outcome = VF_OUTCOME_OK, .http_status = 200,
          .detail = "usable content via canary-SECRET-1234" },
    };
    const char *page = "page echoes canary-SECRET-1234 and ?api_key=abc123def456";
    vf_receipt_input in = {
        .url = "https://example.test/x?token=tok-987654321&q=1", .max_attempts = 1, .providers_available = 1,
        .log = log, .n_attempts = 1, .provider_used = "p", .text = page, .text_len = strlen(page),
    };
    json_t *res = vf_tool_result_build(&in, r);
    char *dump = json_dumps(res, 0);
    cr_assert_null(strstr(dump, "canary-SECRET-1234"), "%s", dump);
    cr_assert_null(strstr(dump, "tok-987654321"), "%s", dump);
    cr_assert_null(strstr(dump, "abc123def456"), "%s", dump);
    cr_assert(strstr(dump, "q=1") != NULL, "non-sensitive query survives: %s", dump);
    free(dump);
    json_decref(res);
    vf_redactor_free(r);
}

Test(receipt, invalid_utf8_from_a_page_still_yields_valid_json)
{
    vf_redactor *r = redactor();
    vf_attempt_record log[1] = { { .provider = "p", .outcome = VF_OUTCOME_OK, .http_status = 200,
                                   .detail = "usable content" } };
    const char page[] = "bad \xff\xfe bytes and a \xc3 truncated";
    vf_receipt_input in = { .url = "http://x/", .max_attempts = 1, .providers_available = 1, .log = log,
                            .n_attempts = 1, .provider_used = "p", .text = page, .text_len = sizeof page - 1 };
    json_t *res = vf_tool_result_build(&in, r);
    cr_assert_not_null(res);
    cr_assert(strstr(text_of(res), "bytes and a") != NULL);
    json_decref(res);
    vf_redactor_free(r);
}
