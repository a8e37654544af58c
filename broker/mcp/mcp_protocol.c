#include "broker/mcp/mcp_protocol.h"

#include <stdio.h>
#include <string.h>

#include "broker/mcp/mcp_tool.h"

/* Newest first; a client asking for another gets the newest. */
static const char *const versions[] = { VF_MCP_LATEST_VERSION, "2025-06-18", "2025-03-26", "2024-11-05", NULL };

static const char instructions[] =
    "verified_web_lookup fetches a web page through a sandboxed broker and says whether the content is "
    "usable. Check isError (or the receipt's ok): a cookie wall, bot challenge, empty page or error page is "
    "reported as a failed lookup with a LOOKUP FAILED line, never as page text.";

bool vf_mcp_version_supported(const char *version)
{
    for (size_t i = 0; version && versions[i]; i++)
        if (strcmp(version, versions[i]) == 0)
            return true;
    return false;
}

static bool valid_id(const json_t *id)
{
    return json_is_string(id) || json_is_integer(id);
}

vf_mcp_msg_kind vf_mcp_kind(const json_t *m)
{
    if (!json_is_object(m) || !json_is_string(json_object_get(m, "jsonrpc")) ||
        strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0") != 0)
        return VF_MCP_MSG_INVALID;
    json_t *id = json_object_get(m, "id");
    json_t *method = json_object_get(m, "method");
    if (json_is_string(method)) {
        if (!id)
            return VF_MCP_MSG_NOTIFICATION;
        return valid_id(id) ? VF_MCP_MSG_REQUEST : VF_MCP_MSG_INVALID;
    }
    if (!method && id && (json_object_get(m, "result") || json_object_get(m, "error")))
        return VF_MCP_MSG_RESPONSE;
    return VF_MCP_MSG_INVALID;
}

const char *vf_mcp_method(const json_t *m)
{
    return json_string_value(json_object_get(m, "method"));
}

const json_t *vf_mcp_cancelled_id(const json_t *m)
{
    const char *method = vf_mcp_method(m);
    if (!method || strcmp(method, "notifications/cancelled") != 0)
        return NULL;
    json_t *id = json_object_get(json_object_get(m, "params"), "requestId");
    return valid_id(id) ? id : NULL;
}

const json_t *vf_mcp_progress_token(const json_t *m)
{
    json_t *token = json_object_get(json_object_get(json_object_get(m, "params"), "_meta"), "progressToken");
    return valid_id(token) ? token : NULL;
}

static void set_error(vf_mcp_error *e, int code, const char *field, const char *message)
{
    memset(e, 0, sizeof *e);
    e->code = code;
    snprintf(e->field, sizeof e->field, "%s", field);
    snprintf(e->message, sizeof e->message, "%s", message);
}

json_t *vf_mcp_error_response(const json_t *id, const vf_mcp_error *err)
{
    char named[400];
    /* The message itself names the field: many hosts show only the message. */
    if (err->field[0])
        snprintf(named, sizeof named, "invalid argument '%s': %s", err->field, err->message);
    else
        snprintf(named, sizeof named, "%s", err->message);
    json_t *error = json_pack("{s:i, s:s}", "code", err->code, "message", named);
    json_t *data = NULL;
    if (err->field[0])
        data = json_pack("{s:s}", "field", err->field);
    if (err->code == VF_MCP_THROTTLED) {
        data = data ? data : json_object();
        json_object_set_new(data, "retry_after", json_integer(err->retry_after));
    }
    if (error && data)
        json_object_set_new(error, "data", data);
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", error);
}

json_t *vf_mcp_progress(const json_t *token, double progress, double total, const char *message)
{
    return json_pack("{s:s, s:s, s:{s:O, s:f, s:f, s:s}}", "jsonrpc", "2.0", "method", "notifications/progress",
                     "params", "progressToken", token, "progress", progress, "total", total, "message", message);
}

static json_t *result(const json_t *id, json_t *value)
{
    if (!value)
        return NULL;
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", value);
}

static json_t *initialize(const vf_mcp_backend *be, const json_t *params)
{
    const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
    const char *version = vf_mcp_version_supported(asked) ? asked : VF_MCP_LATEST_VERSION;
    return json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", version, "capabilities",
                     "tools", "listChanged", 0, "serverInfo", "name", "verifetch", "title",
                     "verifetch verified web lookup", "version", be->server_version ? be->server_version : "0",
                     "instructions", instructions);
}

static json_t *tools_list(const vf_mcp_backend *be, vf_mcp_error *err)
{
    json_t *spec = be->tool_spec(be->ctx, err);
    if (!spec)
        return NULL;
    json_t *tool = vf_mcp_tool_from_spec(spec);
    json_decref(spec);
    if (!tool) {
        set_error(err, VF_JSONRPC_INTERNAL_ERROR, "", "verifetchd's tool spec is not the expected shape");
        return NULL;
    }
    return json_pack("{s:[o]}", "tools", tool);
}

static json_t *tools_call(const vf_mcp_backend *be, const json_t *params, vf_mcp_error *err)
{
    const char *name = json_string_value(json_object_get(params, "name"));
    if (!name) {
        set_error(err, VF_JSONRPC_INVALID_PARAMS, "name", "tools/call needs params.name (a string)");
        return NULL;
    }
    if (strcmp(name, VF_MCP_TOOL_NAME) != 0) {
        set_error(err, VF_JSONRPC_INVALID_PARAMS, "name", "unknown tool (this server has verified_web_lookup)");
        return NULL;
    }
    json_t *args = json_object_get(params, "arguments");
    if (args && !json_is_object(args)) {
        set_error(err, VF_JSONRPC_INVALID_PARAMS, "arguments", "arguments must be an object");
        return NULL;
    }
    json_t *empty = args ? NULL : json_object();
    json_t *tool_result = be->lookup(be->ctx, args ? args : empty, err);
    json_decref(empty);
    if (!tool_result)
        return NULL;
    json_t *out = vf_mcp_call_result(tool_result);
    json_decref(tool_result);
    if (!out)
        set_error(err, VF_JSONRPC_INTERNAL_ERROR, "", "verifetchd's answer is not a ToolResult");
    return out;
}

json_t *vf_mcp_handle(const vf_mcp_backend *be, const json_t *m)
{
    vf_mcp_error err;
    memset(&err, 0, sizeof err);
    if (json_is_array(m)) {
        set_error(&err, VF_JSONRPC_INVALID_REQUEST, "", "JSON-RPC batches are not supported");
        return vf_mcp_error_response(NULL, &err);
    }
    vf_mcp_msg_kind kind = vf_mcp_kind(m);
    if (kind == VF_MCP_MSG_NOTIFICATION || kind == VF_MCP_MSG_RESPONSE)
        return NULL; /* initialized, cancelled (the transport's job), or a client's answer */
    json_t *id = json_object_get(m, "id");
    if (kind == VF_MCP_MSG_INVALID) {
        set_error(&err, VF_JSONRPC_INVALID_REQUEST, "", "not a JSON-RPC 2.0 request");
        return vf_mcp_error_response(valid_id(id) ? id : NULL, &err);
    }
    const char *method = vf_mcp_method(m);
    json_t *params = json_object_get(m, "params");
    if (params && !json_is_object(params)) {
        set_error(&err, VF_JSONRPC_INVALID_PARAMS, "params", "params must be an object");
        return vf_mcp_error_response(id, &err);
    }
    json_t *value = NULL;
    if (strcmp(method, "initialize") == 0)
        value = initialize(be, params);
    else if (strcmp(method, "ping") == 0)
        value = json_object();
    else if (strcmp(method, "tools/list") == 0)
        value = tools_list(be, &err);
    else if (strcmp(method, "tools/call") == 0)
        value = tools_call(be, params, &err);
    else {
        char message[200];
        snprintf(message, sizeof message, "method not found: %.120s", method);
        set_error(&err, VF_JSONRPC_METHOD_NOT_FOUND, "", message);
    }
    if (value)
        return result(id, value);
    if (!err.code)
        set_error(&err, VF_JSONRPC_INTERNAL_ERROR, "", "out of memory");
    return vf_mcp_error_response(id, &err);
}

json_t *vf_mcp_handle_text(const vf_mcp_backend *be, const char *text, size_t len)
{
    json_error_t jerr;
    json_t *m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!m) {
        vf_mcp_error err;
        set_error(&err, VF_JSONRPC_PARSE_ERROR, "", "message is not valid JSON");
        return vf_mcp_error_response(NULL, &err);
    }
    json_t *out = vf_mcp_handle(be, m);
    json_decref(m);
    return out;
}
