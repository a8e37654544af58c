/* The MCP core's backend inside verifetchd: lookups run in-process on the
 * caller's tenant, through the same parser, quota, lookup and log as
 * POST /v1/lookup. */
#ifndef VERIFETCH_MCP_LOCAL_BACKEND_H
#define VERIFETCH_MCP_LOCAL_BACKEND_H

#include "broker/broker_context.h"
#include "broker/mcp/mcp_protocol.h"

struct vf_cancel;

typedef struct {
    const vf_broker *broker;
    const vf_tenant_config *tenant;
    struct vf_cancel *cancel;   /* fired when the HTTP client hangs up; NULL = the call makes a token
                                 * of its own, fired only by notifications/cancelled */
    const json_t *request_id;   /* the tools/call's JSON-RPC id, for notifications/cancelled; may be NULL */
} vf_mcp_local;

/* A backend whose ctx is local (which must outlive it). */
vf_mcp_backend vf_mcp_local_backend(vf_mcp_local *local);

#endif
