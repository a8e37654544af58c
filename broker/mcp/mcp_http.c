#include "broker/mcp/mcp_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "broker/mcp/mcp_inflight.h"
#include "broker/mcp/mcp_local_backend.h"
#include "broker/mcp/mcp_protocol.h"

/* "localhost", "127.0.0.1" or "[::1]", optionally followed by ":port". */
static bool loopback_authority(const char *a, size_t len)
{
    static const char *const names[] = { "localhost", "127.0.0.1", "[::1]", NULL };
    for (size_t i = 0; names[i]; i++) {
        size_t n = strlen(names[i]);
        if (len < n || strncasecmp(a, names[i], n) != 0)
            continue;
        if (len == n)
            return true;
        if (a[n] != ':' || len == n + 1 || len - n - 1 > 5)
            continue;
        bool digits = true;
        for (size_t k = n + 1; k < len; k++)
            digits = digits && a[k] >= '0' && a[k] <= '9';
        if (digits)
            return true;
    }
    return false;
}

bool vf_mcp_host_allowed(const char *host)
{
    /* HTTP/1.1 requires Host; a rebinding page's requests carry the
     * attacker's name there, never a loopback one. */
    return host && loopback_authority(host, strlen(host));
}

bool vf_mcp_origin_allowed(const char *origin)
{
    if (!origin)
        return true; /* not a browser: Host and the tenant check still apply */
    const char *rest = NULL;
    if (strncasecmp(origin, "http://", 7) == 0)
        rest = origin + 7;
    else if (strncasecmp(origin, "https://", 8) == 0)
        rest = origin + 8;
    return rest && loopback_authority(rest, strlen(rest));
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    struct MHD_Response *r = text ? MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE)
                                  : MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    if (text)
        MHD_add_response_header(r, "Content-Type", "application/json");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", "POST");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result refuse(struct MHD_Connection *c, unsigned status, int code, const char *message)
{
    vf_mcp_error err = { .code = code };
    snprintf(err.message, sizeof err.message, "%s", message);
    return reply(c, status, vf_mcp_error_response(NULL, &err));
}

bool vf_mcp_http_refused(struct MHD_Connection *c, const vf_tenant_config *tenant, const char *method,
                         bool too_large, enum MHD_Result *ret)
{
    if (!vf_mcp_host_allowed(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host")))
        *ret = refuse(c, MHD_HTTP_FORBIDDEN, VF_JSONRPC_INVALID_REQUEST, "Host must be a loopback name");
    else if (!vf_mcp_origin_allowed(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin")))
        *ret = refuse(c, MHD_HTTP_FORBIDDEN, VF_JSONRPC_INVALID_REQUEST, "Origin is not a loopback origin");
    else if (strcmp(method, "POST") != 0)
        *ret = refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED, VF_JSONRPC_INVALID_REQUEST,
                      "this server answers POST only (no server-initiated stream, no sessions)");
    else if (!tenant)
        *ret = refuse(c, MHD_HTTP_FORBIDDEN, VF_JSONRPC_INVALID_REQUEST, "caller is not mapped to any tenant");
    else if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version") &&
             !vf_mcp_version_supported(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version")))
        *ret = refuse(c, MHD_HTTP_BAD_REQUEST, VF_JSONRPC_INVALID_REQUEST, "unsupported MCP-Protocol-Version");
    else if (too_large)
        *ret = refuse(c, MHD_HTTP_CONTENT_TOO_LARGE, VF_JSONRPC_INVALID_REQUEST, "message is larger than 64 KiB");
    else
        return false;
    return true;
}

json_t *vf_mcp_http_answer(const vf_broker *b, const vf_tenant_config *tenant, const char *body, size_t len,
                           struct vf_cancel *cancel, unsigned *status)
{
    json_error_t jerr;
    json_t *m = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &jerr);
    if (!m) {
        vf_mcp_error err = { .code = VF_JSONRPC_PARSE_ERROR };
        snprintf(err.message, sizeof err.message, "%s", "message is not valid JSON");
        *status = MHD_HTTP_BAD_REQUEST;
        return vf_mcp_error_response(NULL, &err);
    }
    vf_mcp_msg_kind kind = vf_mcp_kind(m);
    const json_t *cancelled = vf_mcp_cancelled_id(m);
    if (cancelled)
        vf_mcp_inflight_cancel(tenant->name, cancelled);
    vf_mcp_local local = { .broker = b, .tenant = tenant, .cancel = cancel,
                           .request_id = kind == VF_MCP_MSG_REQUEST ? json_object_get(m, "id") : NULL };
    vf_mcp_backend be = vf_mcp_local_backend(&local);
    json_t *answer = vf_mcp_handle(&be, m);
    json_decref(m);
    if (kind == VF_MCP_MSG_NOTIFICATION || kind == VF_MCP_MSG_RESPONSE) {
        json_decref(answer);
        *status = MHD_HTTP_ACCEPTED;
        return NULL;
    }
    *status = kind == VF_MCP_MSG_INVALID ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_OK;
    return answer;
}

enum MHD_Result vf_mcp_http_serve(struct MHD_Connection *c, const vf_broker *b, const vf_tenant_config *tenant,
                                  const char *method, const char *body, size_t len, bool too_large)
{
    enum MHD_Result ret;
    if (vf_mcp_http_refused(c, tenant, method, too_large, &ret))
        return ret;
    unsigned status = 0;
    json_t *answer = vf_mcp_http_answer(b, tenant, body, len, NULL, &status);
    return reply(c, status, answer);
}
