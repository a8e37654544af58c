/* The model-facing request parser: every bad input is refused and names its field. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "broker/lookup/lookup.h"
#include "broker/api/request.h"

static int parse(const char *body, vf_lookup_request *req, vf_request_error *err)
{
    return vf_request_parse(body, strlen(body), req, err);
}

Test(request, accepts_full_request)
{
    vf_lookup_request req;
    vf_request_error err;
    cr_assert_eq(parse("{\"url\":\"https://example.org/a?b=1\",\"must_contain\":\"hello\","
                       "\"min_chars\":10,\"max_attempts\":2}", &req, &err), 0);
    cr_assert_str_eq(req.url, "https://example.org/a?b=1");
    cr_assert_str_eq(req.must_contain, "hello");
    cr_assert_eq(req.min_chars, 10);
    cr_assert(req.has_max_attempts);
    cr_assert_eq(req.max_attempts, 2);
    vf_request_free(&req);
    cr_assert_eq(parse("{\"url\":\"http://a/\",\"must_contain\":\"x\",\"must_contain_mode\":\"exact\"}",
                       &req, &err), 0);
    cr_assert(req.must_contain_exact);
    vf_request_free(&req);
}

Test(request, defaults_when_optional_fields_absent)
{
    vf_lookup_request req;
    vf_request_error err;
    cr_assert_eq(parse("{\"url\":\"http://example.org/\"}", &req, &err), 0);
    cr_assert_null(req.must_contain);
    cr_assert_not(req.must_contain_exact, "folded matching is the default");
    cr_assert_eq(req.min_chars, VF_DEFAULT_MIN_CHARS);
    cr_assert_not(req.has_max_attempts);
    vf_request_free(&req);
}

typedef struct {
    const char *body;
    const char *field;
    const char *message_part;
} bad_case;

static const bad_case bad_cases[] = {
    { "not json", "", "not valid JSON" },
    { "[1,2]", "", "JSON object" },
    { "{}", "url", "required" },
    { "{\"url\":42}", "url", "string" },
    { "{\"url\":\"file:///etc/passwd\"}", "url", "http" },
    { "{\"url\":\"ftp://example.org/\"}", "url", "http" },
    { "{\"url\":\"https:///nohost\"}", "url", "host" },
    { "{\"url\":\"http://exa mple.org/\"}", "url", "spaces" },
    { "{\"url\":\"http://a/\\u0000b\"}", "url", "NUL" },
    { "{\"url\":\"http://a/\",\"must_contain\":7}", "must_contain", "string" },
    { "{\"url\":\"http://a/\",\"must_contain\":\"\"}", "must_contain", "empty" },
    { "{\"url\":\"http://a/\",\"must_contain_mode\":\"regex\"}", "must_contain_mode", "folded" },
    { "{\"url\":\"http://a/\",\"must_contain_mode\":true}", "must_contain_mode", "exact" },
    { "{\"url\":\"http://a/\",\"min_chars\":-1}", "min_chars", "between" },
    { "{\"url\":\"http://a/\",\"min_chars\":1.5}", "min_chars", "integer" },
    { "{\"url\":\"http://a/\",\"min_chars\":\"40\"}", "min_chars", "integer" },
    { "{\"url\":\"http://a/\",\"max_attempts\":\"3\"}", "max_attempts", "integer" },
    { "{\"url\":\"http://a/\",\"providers\":[\"x\"]}", "providers", "unknown field" },
    { "{\"url\":\"http://a/\",\"url\":\"http://b/\"}", "", "duplicate" },
};

Test(request, rejects_bad_input_naming_the_field)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        vf_lookup_request req;
        vf_request_error err;
        const bad_case *c = &bad_cases[i];
        cr_assert_eq(parse(c->body, &req, &err), -1, "accepted: %s", c->body);
        cr_expect_str_eq(err.field, c->field, "field for %s", c->body);
        cr_expect(strstr(err.message, c->message_part) != NULL, "message '%s' for %s lacks '%s'",
                  err.message, c->body, c->message_part);
        cr_assert_null(req.url);
    }
}

Test(request, rejects_oversized_body)
{
    size_t n = VF_MAX_REQUEST_BODY + 10;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    memcpy(big, "{\"url\":\"http://a/\"}", 19);
    big[n] = '\0';
    vf_lookup_request req;
    vf_request_error err;
    cr_assert_eq(vf_request_parse(big, n, &req, &err), -1);
    cr_assert(strstr(err.message, "64 KiB") != NULL);
    free(big);
}

Test(request, clamps_attempts_like_the_seed)
{
    cr_assert_eq(vf_clamp_attempts(false, 0, 3), 3);
    cr_assert_eq(vf_clamp_attempts(true, 99, 3), 3);
    cr_assert_eq(vf_clamp_attempts(true, 0, 3), 1);
    cr_assert_eq(vf_clamp_attempts(true, -5, 3), 1);
    cr_assert_eq(vf_clamp_attempts(true, 2, 3), 2);
}

Test(request, page_fields_map_to_render_mask_and_pagination)
{
    vf_lookup_request req;
    vf_request_error err;
    cr_assert_eq(parse("{\"url\":\"http://example.org/\"}", &req, &err), 0);
    cr_assert_eq(req.render, 0, "default: markdown, main content, inline links");
    cr_assert_eq(req.max_chars, VF_DEFAULT_MAX_CHARS);
    cr_assert_eq(req.start_index, 0);
    vf_request_free(&req);
    cr_assert_eq(parse("{\"url\":\"http://example.org/\",\"format\":\"text\",\"extract\":\"page\","
                       "\"links\":\"list\",\"max_chars\":1000000,\"start_index\":77}", &req, &err), 0,
                 "%s: %s", err.field, err.message);
    cr_assert_eq(req.render, VF_RENDER_TEXT | VF_RENDER_PAGE | VF_RENDER_LINKS_LIST);
    cr_assert_eq(req.max_chars, 1000000);
    cr_assert_eq(req.start_index, 77);
    vf_request_free(&req);
    cr_assert_eq(parse("{\"url\":\"http://example.org/\",\"format\":\"markdown\",\"extract\":\"main\","
                       "\"links\":\"none\"}", &req, &err), 0);
    cr_assert_eq(req.render, VF_RENDER_LINKS_NONE);
    vf_request_free(&req);
}

Test(request, bad_page_fields_are_refused_naming_the_field)
{
    static const struct { const char *extra, *field; } cases[] = {
        { "\"format\":\"html\"", "format" },       { "\"format\":1", "format" },
        { "\"extract\":\"article\"", "extract" },  { "\"links\":true", "links" },
        { "\"links\":\"INLINE\"", "links" },       { "\"max_chars\":0", "max_chars" },
        { "\"max_chars\":1000001", "max_chars" },  { "\"max_chars\":\"10\"", "max_chars" },
        { "\"max_chars\":1.5", "max_chars" },      { "\"start_index\":-1", "start_index" },
        { "\"start_index\":null", "start_index" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[256];
        snprintf(body, sizeof body, "{\"url\":\"http://example.org/\",%s}", cases[i].extra);
        vf_lookup_request req;
        vf_request_error err;
        cr_assert_eq(parse(body, &req, &err), -1, "%s accepted", body);
        cr_assert_str_eq(err.field, cases[i].field, "%s", body);
        cr_assert(strlen(err.message) > 0);
    }
}
