#include "broker/mcp/mcp_tool.h"

#include <stdlib.h>
#include <string.h>

static json_t *typed(const char *type)
{
    return json_pack("{s:s}", "type", type);
}

static json_t *nullable(const char *type)
{
    return json_pack("{s:[s,s]}", "type", type, "null");
}

static json_t *attempt_schema(void)
{
    json_t *props = json_object();
    json_object_set_new(props, "provider", typed("string"));
    json_object_set_new(props, "outcome",
                        json_pack("{s:s, s:[s,s,s,s,s]}", "type", "string", "enum", "ok", "transport_error",
                                  "http_error", "unusable_content", "malformed_response"));
    json_object_set_new(props, "http_status", nullable("integer"));
    json_object_set_new(props, "detail", nullable("string"));
    return json_pack("{s:s, s:o, s:[s,s], s:b}", "type", "object", "properties", props, "required", "provider",
                     "outcome", "additionalProperties", 1);
}

json_t *vf_mcp_receipt_schema(void)
{
    json_t *props = json_object();
    json_object_set_new(props, "schema", typed("string"));
    json_object_set_new(props, "ok", typed("boolean"));
    json_object_set_new(props, "url", typed("string"));
    json_object_set_new(props, "attempts", typed("integer"));
    json_object_set_new(props, "max_attempts", typed("integer"));
    json_object_set_new(props, "providers_available", typed("integer"));
    json_object_set_new(props, "provider_used", nullable("string"));
    json_object_set_new(props, "fallback_used", typed("boolean"));
    json_object_set_new(props, "failure_reason", nullable("string"));
    json_object_set_new(props, "content_chars", typed("integer"));
    json_object_set_new(props, "attempts_log", json_pack("{s:s, s:o}", "type", "array", "items", attempt_schema()));
    /* Open on purpose: receipts gain additive fields, and MCP clients
     * validate structuredContent against this schema. */
    return json_pack("{s:s, s:o, s:[s,s,s,s], s:b}", "type", "object", "properties", props, "required", "schema",
                     "ok", "url", "attempts_log", "additionalProperties", 1);
}

json_t *vf_mcp_tool_from_spec(const json_t *spec)
{
    const char *name = json_string_value(json_object_get(spec, "name"));
    const char *description = json_string_value(json_object_get(spec, "description"));
    json_t *input = json_object_get(json_object_get(spec, "inputSchema"), "json");
    if (!name || !description || !json_is_object(input))
        return NULL;
    return json_pack("{s:s, s:s, s:s, s:O, s:o, s:{s:s, s:b, s:b, s:b, s:b}}", "name", name, "title",
                     "Verified web lookup", "description", description, "inputSchema", input, "outputSchema",
                     vf_mcp_receipt_schema(), "annotations", "title", "Verified web lookup", "readOnlyHint", 1,
                     "destructiveHint", 0, "idempotentHint", 1, "openWorldHint", 1);
}

static json_t *text_block(const char *text)
{
    return json_pack("{s:s, s:s}", "type", "text", "text", text);
}

json_t *vf_mcp_call_result(const json_t *tool_result)
{
    const char *status = json_string_value(json_object_get(tool_result, "status"));
    json_t *content = json_object_get(tool_result, "content");
    json_t *receipt = json_object_get(json_array_get(content, 0), "json");
    const char *text = json_string_value(json_object_get(json_array_get(content, 1), "text"));
    if (!status || !json_is_object(receipt) || !text)
        return NULL;
    /* The receipt travels twice: structured for clients that read
     * structuredContent, and as text for those that drop it. */
    char *receipt_text = json_dumps(receipt, JSON_COMPACT);
    if (!receipt_text)
        return NULL;
    json_t *out = json_pack("{s:[o,o], s:O, s:b}", "content", text_block(receipt_text), text_block(text),
                            "structuredContent", receipt, "isError", strcmp(status, "success") != 0);
    free(receipt_text);
    return out;
}
