/* Work that must not hold a server thread (a lookup, an MCP tool call): the
 * connection is suspended, the work runs on a work thread (see work_threads.h; bounded by
 * admission), the client's socket is watched for a hang-up that fires the
 * work's cancellation token, and the answer is sent once the connection is
 * resumed. Shared by the connection (until completed) and the thread. */
#ifndef VERIFETCH_DEFERRED_H
#define VERIFETCH_DEFERRED_H

#include "broker/api/server_internal.h"
#include "broker/api/request.h"

typedef struct vf_deferred vf_deferred;

/* Both take b's reference and, for a lookup, req's contents. On success the
 * connection is suspended and ctx->deferred set; -1 = not started (nothing
 * taken: answer 503). The caller has been admitted for tenant. */
int vf_deferred_lookup(vf_server *s, struct MHD_Connection *c, vf_request_ctx *ctx, vf_broker *b,
                       const vf_tenant_config *tenant, vf_lookup_request *req);
int vf_deferred_mcp(vf_server *s, struct MHD_Connection *c, vf_request_ctx *ctx, vf_broker *b,
                    const vf_tenant_config *tenant);

/* On resume: the answer (moved out). */
vf_answer vf_deferred_answer(vf_deferred *d);
/* The connection is done with it. */
void vf_deferred_release(vf_deferred *d);

#endif
