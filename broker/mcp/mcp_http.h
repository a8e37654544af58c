/* MCP Streamable HTTP at /mcp on verifetchd's listeners: one JSON-RPC
 * message per POST, answered with one JSON object (no server-initiated
 * streams, no sessions: each POST stands alone, so there is no state to
 * hijack or leak between tenants). Host and Origin are checked against DNS
 * rebinding before anything else. */
#ifndef VERIFETCH_MCP_HTTP_H
#define VERIFETCH_MCP_HTTP_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "broker/broker_context.h"

/* tenant NULL = the caller maps to no tenant (403). too_large = the body
 * passed the 64 KiB cap (413). */
enum MHD_Result vf_mcp_http_serve(struct MHD_Connection *c, const vf_broker *b, const vf_tenant_config *tenant,
                                  const char *method, const char *body, size_t len, bool too_large);

/* The same in two halves, so the blocking half can run off the server
 * thread: the header checks (true = a refusal was queued, *ret its result;
 * needs no body, so it can run as soon as the head is in), then the message
 * itself (may run a lookup, cancelled when cancel fires; no connection needed). NULL with *status 202 =
 * answer with no body. */
bool vf_mcp_http_refused(struct MHD_Connection *c, const vf_tenant_config *tenant, const char *method,
                         bool too_large, enum MHD_Result *ret);
struct vf_cancel;
json_t *vf_mcp_http_answer(const vf_broker *b, const vf_tenant_config *tenant, const char *body, size_t len,
                           struct vf_cancel *cancel, unsigned *status);

/* The DNS-rebinding checks, exposed for unit tests: a Host header (NULL =
 * absent) must name a loopback host; an Origin header, when present, must be
 * an http(s) loopback origin. */
bool vf_mcp_host_allowed(const char *host);
bool vf_mcp_origin_allowed(const char *origin);

#endif
