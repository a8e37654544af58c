#include "broker/mcp/mcp_local_backend.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/api/lookup_log.h"
#include "broker/api/quota.h"
#include "broker/api/request.h"
#include "broker/api/tool_spec.h"
#include "broker/lookup/cancel.h"
#include "broker/lookup/lookup.h"
#include "broker/mcp/mcp_inflight.h"
#include "ipc/ipc_frame.h"

static json_t *local_spec(void *ctx, vf_mcp_error *err)
{
    (void)err;
    vf_mcp_local *l = ctx;
    return vf_tool_spec(l->tenant->attempt_ceiling);
}

static json_t *local_lookup(void *ctx, const json_t *arguments, vf_mcp_error *err)
{
    vf_mcp_local *l = ctx;
    const vf_broker *b = l->broker;
    const char *tenant = l->tenant->name;
    /* The arguments go through the very parser /v1/lookup uses, so the two
     * entry points accept and refuse exactly the same things. */
    char *body = json_dumps(arguments, JSON_COMPACT);
    if (!body) {
        err->code = VF_JSONRPC_INTERNAL_ERROR;
        snprintf(err->message, sizeof err->message, "out of memory");
        return NULL;
    }
    vf_lookup_request req;
    vf_request_error rerr;
    size_t len = strlen(body);
    bool too_large = len > VF_MAX_REQUEST_BODY;
    int bad = too_large ? -1 : vf_request_parse(body, len, &req, &rerr);
    free(body);
    if (bad) {
        err->code = VF_JSONRPC_INVALID_PARAMS;
        snprintf(err->field, sizeof err->field, "%s", too_large ? "" : rerr.field);
        snprintf(err->message, sizeof err->message, "%s",
                 too_large ? "arguments are larger than 64 KiB" : rerr.message);
        vf_metrics_count_lookup(b->rt->metrics, tenant, VF_LOOKUP_BAD_REQUEST);
        vf_request_log(stderr, tenant, "bad_request", err->field[0] ? err->field : err->message);
        return NULL;
    }
    unsigned retry_after = 0;
    vf_quota_verdict v = vf_quota_acquire(b->rt->quota, tenant, (uint64_t)vf_now_ms(), &retry_after);
    if (v != VF_QUOTA_OK) {
        vf_request_free(&req);
        vf_metrics_count_lookup(b->rt->metrics, tenant, VF_LOOKUP_THROTTLED);
        vf_request_log(stderr, tenant, "throttled", vf_quota_verdict_name(v));
        err->code = VF_MCP_THROTTLED;
        err->retry_after = retry_after ? retry_after : 1;
        snprintf(err->message, sizeof err->message, "%s",
                 v == VF_QUOTA_CONCURRENCY ? "too many lookups in flight for this tenant"
                                           : "requests-per-minute quota exceeded for this tenant");
        return NULL;
    }
    /* A notifications/cancelled for this id (another /mcp POST) fires the
     * same token the transport fires when the client hangs up. */
    vf_cancel own;
    bool have_own = !l->cancel && vf_cancel_init(&own) == 0;
    req.cancel = l->cancel ? l->cancel : have_own ? &own : NULL;
    int slot = vf_mcp_inflight_begin(tenant, l->request_id, req.cancel);
    int64_t started = vf_now_ms();
    json_t *result = vf_lookup_run(b, l->tenant, &req);
    vf_mcp_inflight_end(slot);
    if (have_own)
        vf_cancel_destroy(&own);
    vf_quota_release(b->rt->quota, tenant);
    if (result)
        vf_lookup_log(stderr, tenant, result, vf_now_ms() - started);
    vf_request_free(&req);
    return result;
}

vf_mcp_backend vf_mcp_local_backend(vf_mcp_local *local)
{
    return (vf_mcp_backend){ .lookup = local_lookup, .tool_spec = local_spec, .ctx = local,
                             .server_version = VERIFETCH_VERSION };
}
