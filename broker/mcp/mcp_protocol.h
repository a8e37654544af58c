/* A transport-neutral MCP server core (JSON-RPC 2.0) for verifetch's one
 * tool. A transport hands it one parsed message and sends back what it
 * returns; looking up (over HTTP to verifetchd, or in-process) is a callback.
 * Cancellation and progress need concurrency and belong to the transport;
 * the helpers below give them the message shapes. */
#ifndef VERIFETCH_MCP_PROTOCOL_H
#define VERIFETCH_MCP_PROTOCOL_H

#include <jansson.h>
#include <stdbool.h>

/* JSON-RPC 2.0 error codes (and verifetch's own, in the server range). */
#define VF_JSONRPC_PARSE_ERROR      (-32700)
#define VF_JSONRPC_INVALID_REQUEST  (-32600)
#define VF_JSONRPC_METHOD_NOT_FOUND (-32601)
#define VF_JSONRPC_INVALID_PARAMS   (-32602)
#define VF_JSONRPC_INTERNAL_ERROR   (-32603)
#define VF_MCP_BROKER_UNREACHABLE   (-32001)   /* stdio: verifetchd cannot be reached */
#define VF_MCP_THROTTLED            (-32002)   /* tenant quota; data.retry_after seconds */

#define VF_MCP_LATEST_VERSION "2025-11-25"

typedef struct {
    int code;                /* one of the codes above */
    char field[72];          /* the offending argument, "" when none */
    char message[256];
    unsigned retry_after;    /* VF_MCP_THROTTLED only */
} vf_mcp_error;

typedef struct {
    /* Run one lookup with the tool's arguments (a JSON object, may be
     * anything a client sent). Returns the broker's Strands ToolResult, or
     * NULL with err filled. */
    json_t *(*lookup)(void *ctx, const json_t *arguments, vf_mcp_error *err);
    /* The model-facing tool spec (/v1/tool-spec shape), or NULL with err. */
    json_t *(*tool_spec)(void *ctx, vf_mcp_error *err);
    void *ctx;
    const char *server_version;   /* serverInfo.version */
} vf_mcp_backend;

/* Answer one message. Returns the response to send, or NULL when nothing is
 * to be sent (notifications and responses). Never fails on client input: a
 * malformed message gets a JSON-RPC error. */
json_t *vf_mcp_handle(const vf_mcp_backend *be, const json_t *message);

/* Answer raw bytes (one message): parse errors become -32700. */
json_t *vf_mcp_handle_text(const vf_mcp_backend *be, const char *text, size_t len);

/* True when version is one this server speaks (for MCP-Protocol-Version). */
bool vf_mcp_version_supported(const char *version);

/* What a transport needs to know before dispatching a message. */
typedef enum {
    VF_MCP_MSG_INVALID,        /* not a JSON-RPC message */
    VF_MCP_MSG_REQUEST,        /* has id and method */
    VF_MCP_MSG_NOTIFICATION,   /* method, no id */
    VF_MCP_MSG_RESPONSE,       /* id with result or error: a client answering */
} vf_mcp_msg_kind;

vf_mcp_msg_kind vf_mcp_kind(const json_t *message);
/* The method name, or NULL. */
const char *vf_mcp_method(const json_t *message);
/* notifications/cancelled: the requestId it names (borrowed), or NULL. */
const json_t *vf_mcp_cancelled_id(const json_t *message);
/* tools/call: params._meta.progressToken (borrowed), or NULL. */
const json_t *vf_mcp_progress_token(const json_t *message);

/* {"jsonrpc":"2.0","error":{...},"id":id} (id NULL → null). */
json_t *vf_mcp_error_response(const json_t *id, const vf_mcp_error *err);
/* notifications/progress for token. */
json_t *vf_mcp_progress(const json_t *token, double progress, double total, const char *message);

#endif
