/* One verified lookup: try the tenant's providers in policy order within the
 * clamped attempt budget, judge each result, and build the ToolResult. */
#ifndef VERIFETCH_LOOKUP_H
#define VERIFETCH_LOOKUP_H

#include <jansson.h>

#include "broker/broker_context.h"
#include "broker/api/request.h"

/* max_attempts clamped to [1, ceiling]; not given means the ceiling. */
unsigned vf_clamp_attempts(bool given, int requested, unsigned ceiling);

/* Never NULL except on allocation failure. Goes through the lookup cache
 * (broker/fleet/fleet_lookup.h) when the tenant has one. */
json_t *vf_lookup_run(const vf_broker *b, const vf_tenant_config *tenant, const vf_lookup_request *req);

/* true when result is not a ToolResult but a 429 (every provider's key quota
 * used up); *retry_after_s >= 1. */
bool vf_lookup_throttled(const json_t *result, unsigned *retry_after_s);

#endif
