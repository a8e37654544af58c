/* One verified lookup: try the tenant's providers in policy order within the
 * clamped attempt budget, judge each result, and build the ToolResult. */
#ifndef VERIFETCH_LOOKUP_H
#define VERIFETCH_LOOKUP_H

#include <jansson.h>

#include "broker/broker_context.h"
#include "broker/api/request.h"

/* max_attempts clamped to [1, ceiling]; not given means the ceiling. */
unsigned vf_clamp_attempts(bool given, int requested, unsigned ceiling);

/* Never NULL except on allocation failure. */
json_t *vf_lookup_run(const vf_broker *b, const vf_tenant_config *tenant, const vf_lookup_request *req);

#endif
