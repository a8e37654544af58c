/* The model-facing tool description: only what a model may choose. Providers,
 * keys and timeouts are policy and never appear here. */
#ifndef VERIFETCH_TOOL_SPEC_H
#define VERIFETCH_TOOL_SPEC_H

#include <jansson.h>

json_t *vf_tool_spec(unsigned attempt_ceiling);

#endif
