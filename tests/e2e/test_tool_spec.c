/* E2E: GET /v1/tool-spec?format=… gives the same model-facing inputs in
 * each host's shape, the default stays today's, and an unknown format is a
 * 400 naming the field. */
#include "test_common.h"

TestSuite(tool_spec, .init = hx_setup, .fini = hx_teardown, .timeout = 30);

static hx_broker broker;

static json_t *get_spec(const char *query, int want_status)
{
    char path[128];
    snprintf(path, sizeof path, "/v1/tool-spec%s", query);
    hx_response r = hx_request(&broker, "GET", path, NULL, 0);
    cr_assert_eq(r.status, want_status, "%s: status %d body %s", path, r.status, r.body);
    cr_assert(json_is_object(r.json), "%s: not JSON: %s", path, r.body);
    json_t *doc = json_incref(r.json);
    hx_response_free(&r);
    return doc;
}

/* The input schema: exactly the eight model-facing inputs, url required, closed, ceiling as maximum. */
static void assert_input_schema(const json_t *schema, const char *where)
{
    cr_assert(json_is_object(schema), "%s: no schema", where);
    cr_assert_str_eq(json_string_value(json_object_get(schema, "type")), "object", "%s", where);
    json_t *props = json_object_get(schema, "properties");
    cr_assert_eq(json_object_size(props), 8, "%s: properties must be the 8 inputs", where);
    static const char *const want[] = { "url", "must_contain", "must_contain_mode", "min_chars", "max_attempts",
                                         "format", "max_chars", "start_index" };
    for (size_t i = 0; i < 8; i++)
        cr_assert_not_null(json_object_get(props, want[i]), "%s: %s missing", where, want[i]);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(schema, "required"), 0)), "url", "%s", where);
    cr_assert(json_is_false(json_object_get(schema, "additionalProperties")), "%s: inputs are closed", where);
    json_int_t max = json_integer_value(json_object_get(json_object_get(props, "max_attempts"), "maximum"));
    cr_assert_eq(max, TC_CEILING, "%s: max_attempts.maximum is the tenant ceiling", where);
}

Test(tool_spec, every_format_carries_the_same_inputs)
{
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    hx_broker_start(&broker, &o);

    json_t *plain = get_spec("", 200);
    cr_assert_str_eq(json_string_value(json_object_get(plain, "name")), "verified_web_lookup");
    assert_input_schema(json_object_get(json_object_get(plain, "inputSchema"), "json"), "default");

    json_t *bedrock = get_spec("?format=bedrock", 200);
    cr_assert(json_equal(json_object_get(bedrock, "toolSpec"), plain), "bedrock wraps the default in toolSpec");

    json_t *openai = get_spec("?format=openai", 200);
    cr_assert_str_eq(json_string_value(json_object_get(openai, "type")), "function");
    json_t *fn = json_object_get(openai, "function");
    cr_assert_str_eq(json_string_value(json_object_get(fn, "name")), "verified_web_lookup");
    assert_input_schema(json_object_get(fn, "parameters"), "openai");

    json_t *js = get_spec("?format=json-schema", 200);
    cr_assert(strstr(json_string_value(json_object_get(js, "$schema")), "json-schema.org") != NULL);
    assert_input_schema(js, "json-schema");

    json_t *mcp = get_spec("?format=mcp", 200);
    assert_input_schema(json_object_get(mcp, "inputSchema"), "mcp");
    json_t *ann = json_object_get(mcp, "annotations");
    cr_assert(json_is_true(json_object_get(ann, "readOnlyHint")) && json_is_true(json_object_get(ann, "openWorldHint")));
    cr_assert(json_is_true(json_object_get(json_object_get(mcp, "outputSchema"), "additionalProperties")),
              "the receipt's output schema stays open");

    json_t *bad = get_spec("?format=yaml", 400);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(bad, "error"), "field")), "format");

    json_decref(plain), json_decref(bedrock), json_decref(openai), json_decref(js), json_decref(mcp), json_decref(bad);
    hx_broker_stop_checked(&broker, NULL, 0);
    hx_assert_no_sanitizer_report(&broker);
}
