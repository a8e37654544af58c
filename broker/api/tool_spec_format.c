#include "broker/api/tool_spec_format.h"

#include <string.h>

#include "broker/api/tool_spec.h"
#include "broker/mcp/mcp_tool.h"

json_t *vf_tool_spec_as(const char *format, unsigned attempt_ceiling)
{
    json_t *spec = vf_tool_spec(attempt_ceiling);
    if (!spec || !format)
        return spec;
    json_t *out = NULL;
    const char *name = json_string_value(json_object_get(spec, "name"));
    const char *description = json_string_value(json_object_get(spec, "description"));
    json_t *schema = json_object_get(json_object_get(spec, "inputSchema"), "json");
    if (strcmp(format, "bedrock") == 0) {
        /* An entry of Converse's toolConfig.tools[]. */
        out = json_pack("{s:O}", "toolSpec", spec);
    } else if (strcmp(format, "openai") == 0) {
        /* An entry of Chat Completions' tools[]. */
        out = json_pack("{s:s, s:{s:s, s:s, s:O}}", "type", "function", "function", "name", name, "description",
                        description, "parameters", schema);
    } else if (strcmp(format, "json-schema") == 0) {
        out = json_deep_copy(schema);
        if (out) {
            json_object_set_new(out, "$schema", json_string("https://json-schema.org/draft/2020-12/schema"));
            json_object_set_new(out, "title", json_string(name));
            json_object_set_new(out, "description", json_string(description));
        }
    } else if (strcmp(format, "mcp") == 0) {
        out = vf_mcp_tool_from_spec(spec);
    }
    json_decref(spec);
    return out;
}
