/* The verified_web_lookup tool as MCP sees it: the tool definition (built from
 * the model-facing /v1/tool-spec) and the CallToolResult built from the
 * broker's Strands ToolResult. Pure JSON transforms, shared by both transports. */
#ifndef VERIFETCH_MCP_TOOL_H
#define VERIFETCH_MCP_TOOL_H

#include <jansson.h>

#define VF_MCP_TOOL_NAME "verified_web_lookup"

/* {name, description, inputSchema:{json:SCHEMA}} → MCP Tool with title,
 * annotations (read-only, open world) and an OPEN outputSchema for the
 * receipt (additive receipt fields must never fail a client's validation).
 * NULL when spec is not that shape. */
json_t *vf_mcp_tool_from_spec(const json_t *spec);

/* The receipt's output schema alone (open: additionalProperties allowed). */
json_t *vf_mcp_receipt_schema(void);

/* Strands ToolResult {status, content:[{json:R},{text:T}]} → CallToolResult
 * {content:[{type:text, text:JSON(R)}, {type:text, text:T}], structuredContent:R,
 *  isError: status != "success"}. NULL when tool_result is not that shape. */
json_t *vf_mcp_call_result(const json_t *tool_result);

#endif
