/* GET /v1/tool-spec?format=…: the same model-facing tool in the shape each
 * host wants. Absent format = today's shape (Strands/Bedrock toolSpec body). */
#ifndef VERIFETCH_TOOL_SPEC_FORMAT_H
#define VERIFETCH_TOOL_SPEC_FORMAT_H

#include <jansson.h>

#define VF_TOOL_SPEC_FORMATS "bedrock, json-schema, openai, mcp"

/* The tool for format (NULL = default), or NULL for an unknown format. */
json_t *vf_tool_spec_as(const char *format, unsigned attempt_ceiling);

#endif
