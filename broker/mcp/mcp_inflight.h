/* The MCP tools/call requests this broker is running, by tenant and JSON-RPC
 * id, so that a notifications/cancelled arriving on another /mcp POST can
 * fire the call's cancellation token (broker/lookup/cancel.h): the lookup
 * then stops its worker and answers at once. A tenant can only cancel its
 * own calls. Thread-safe; at most VF_MCP_INFLIGHT_MAX calls are tracked (a
 * call beyond that simply cannot be cancelled by notification). */
#ifndef VERIFETCH_MCP_INFLIGHT_H
#define VERIFETCH_MCP_INFLIGHT_H

#include <jansson.h>
#include <stdbool.h>

#define VF_MCP_INFLIGHT_MAX 1024

struct vf_cancel;

/* Track (tenant, id) -> cancel; returns a slot for vf_mcp_inflight_end, or -1. */
int vf_mcp_inflight_begin(const char *tenant, const json_t *id, struct vf_cancel *cancel);
void vf_mcp_inflight_end(int slot);

/* Fire the token of the tenant's call with this id; true when one was running. */
bool vf_mcp_inflight_cancel(const char *tenant, const json_t *id);

#endif
