/* What each endpoint answers. Health, readiness, metrics and the tool spec
 * are answered on the server thread (cheap, never wait on a worker); a
 * lookup or an MCP message is admitted, then deferred to a thread of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "broker/api/conn_deadline.h"
#include "broker/api/deferred.h"
#include "broker/api/health.h"
#include "broker/api/hit_answer.h"
#include "broker/api/lookup_log.h"
#include "broker/api/metrics.h"
#include "broker/api/request_framing.h"
#include "broker/api/server_internal.h"
#include "broker/api/tool_spec.h"
#include "broker/api/tool_spec_format.h"
#include "broker/fleet/fleet.h"
#include "broker/fleet/fleet_lookup.h"
#include "broker/mcp/mcp_http.h"
#include "ipc/ipc_frame.h"
#include "policy/tenant_auth.h"

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *field, const char *message)
{
    vf_answer a = vf_answer_error(status, field, message);
    return vf_answer_send(c, &a);
}

static enum MHD_Result send_busy(struct MHD_Connection *c, unsigned retry_after, const char *why)
{
    vf_answer a = vf_answer_busy(MHD_HTTP_SERVICE_UNAVAILABLE, retry_after, why);
    return vf_answer_send(c, &a);
}

/* Unix callers are who the kernel says (SO_PEERCRED, read once when the
 * connection came in: a unix peer's credentials are fixed at connect); TCP
 * callers are who their bearer token says. Nothing else identifies a tenant. */
const vf_tenant_config *vf_route_tenant(const vf_config *cfg, struct MHD_Connection *c, const vf_request_ctx *ctx)
{
    if (ctx->tcp) {
        const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
            return NULL;
        return vf_tenant_for_token(cfg, auth + 7);
    }
    if (ctx->conn && ctx->conn->peer_counted)
        return vf_tenant_for_uid(cfg, ctx->conn->uid);
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (!info || getsockopt(info->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return NULL;
    return vf_tenant_for_uid(cfg, cred.uid);
}

enum MHD_Result vf_route_resumed(struct MHD_Connection *c, vf_request_ctx *ctx)
{
    vf_answer a = vf_deferred_answer(ctx->deferred);
    return vf_answer_send(c, &a);
}

void vf_route_release(vf_request_ctx *ctx)
{
    vf_deferred_release(ctx->deferred);
    free(ctx->body);
    free(ctx);
}

static enum MHD_Result forbidden(struct MHD_Connection *c, bool tcp)
{
    return send_error(c, MHD_HTTP_FORBIDDEN, "",
                      tcp ? "missing or unknown bearer token" : "this caller is not mapped to any tenant");
}

static enum MHD_Result refuse_overloaded(vf_broker *b, const vf_tenant_config *tenant, struct MHD_Connection *c,
                                         unsigned retry_after)
{
    vf_metrics_count_lookup(b->rt->metrics, tenant->name, VF_LOOKUP_THROTTLED);
    vf_request_log(stderr, tenant->name, "overloaded", "admission queue full");
    return send_busy(c, retry_after, "verifetchd is at capacity (admission queue full); retry later");
}

enum MHD_Result vf_route_head(vf_server *s, vf_broker *b, struct MHD_Connection *c, const char *method,
                              const char *url, vf_request_ctx *ctx, bool *refused)
{
    *refused = true;
    if (atomic_load(&s->draining))
        return send_busy(c, 1, "verifetchd is shutting down");
    const char *framing = vf_request_framing_problem(c);   /* two Content-Lengths, CL beside chunking */
    if (framing)
        return send_error(c, MHD_HTTP_BAD_REQUEST, "", framing);
    const vf_tenant_config *tenant = vf_route_tenant(b->cfg, c, ctx);
    if (strcmp(url, "/mcp") == 0) {
        enum MHD_Result ret;
        if (vf_mcp_http_refused(c, tenant, method, false, &ret))
            return ret;
    } else if (ctx->tcp && !tenant) {
        /* Before the body: an unauthenticated TCP caller holds nothing. */
        return forbidden(c, true);
    } else if (tenant && !tenant->cache.enabled && strcmp(url, "/v1/lookup") == 0 &&
               strcmp(method, "POST") == 0) {
        /* A full queue is answered before the body is read or parsed: a
         * refusal costs no more than its head. (With a cache, a hit may still
         * be served without a place in the queue: decided after the body.) */
        unsigned retry_after = 0;
        if (vf_admission_full(s->admission, tenant->name, &retry_after))
            return refuse_overloaded(b, tenant, c, retry_after);
    }
    *refused = false;
    return MHD_YES;
}

static enum MHD_Result start_deferred(vf_server *s, vf_broker *b, struct MHD_Connection *c, vf_request_ctx *ctx,
                                      const vf_tenant_config *tenant, vf_lookup_request *req)
{
    unsigned retry_after = 0;
    if (!vf_admission_enter(s->admission, tenant->name, &retry_after)) {
        vf_request_free(req);
        return refuse_overloaded(b, tenant, c, retry_after);
    }
    vf_broker_ref(b);   /* the thread's */
    int rc = req ? vf_deferred_lookup(s, c, ctx, b, tenant, req) : vf_deferred_mcp(s, c, ctx, b, tenant);
    if (rc == 0)
        return MHD_YES;
    vf_broker_unref(b);
    vf_admission_leave(s->admission, tenant->name);
    if (req)
        vf_request_free(req);
    return send_busy(c, 1, "verifetchd cannot start a thread for this request now");
}

/* A hit in this process's cache needs neither a thread nor a worker: it is
 * answered here, after the tenant's quota (local, or a slice of the fleet's
 * that this pod holds: no store trip either way). */
static enum MHD_Result answer_hit(vf_broker *b, const vf_tenant_config *tenant, struct MHD_Connection *c,
                                  const vf_lookup_request *req, char *hit, size_t len)
{
    int64_t started = vf_now_ms();
    unsigned retry_after = 0;
    vf_quota_verdict v = vf_quota_try_acquire(b->rt->quota, tenant->name, (uint64_t)started, &retry_after);
    vf_answer a;
    if (v != VF_QUOTA_OK) {
        free(hit);
        a = vf_answer_throttled(b->rt->metrics, tenant->name, v, retry_after);
    } else {
        vf_quota_release(b->rt->quota, tenant->name);
        a = vf_hit_answer(b, tenant, req, hit, len, started);
    }
    return vf_answer_send(c, &a);
}

static enum MHD_Result handle_lookup(vf_server *s, vf_broker *b, const vf_tenant_config *tenant,
                                     struct MHD_Connection *c, vf_request_ctx *ctx)
{
    if (ctx->too_large)
        return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "", "request body is larger than 64 KiB");
    vf_lookup_request req;
    vf_request_error err;
    if (vf_request_parse(ctx->body ? ctx->body : "", ctx->len, &req, &err) != 0) {
        vf_metrics_count_lookup(b->rt->metrics, tenant->name, VF_LOOKUP_BAD_REQUEST);
        vf_request_log(stderr, tenant->name, "bad_request", err.field[0] ? err.field : err.message);
        return send_error(c, MHD_HTTP_BAD_REQUEST, err.field, err.message);
    }
    size_t hit_len = 0;
    char *hit = vf_fleet_ready_hit(b, tenant, &req, &hit_len);   /* with a shared store: from this pod's quota slice */
    if (hit) {
        enum MHD_Result ret = answer_hit(b, tenant, c, &req, hit, hit_len);
        vf_request_free(&req);
        return ret;
    }
    return start_deferred(s, b, c, ctx, tenant, &req);
}

static enum MHD_Result handle_metrics(vf_broker *b, const vf_tenant_config *tenant, struct MHD_Connection *c)
{
    /* Gauges that mirror circuit state are refreshed at scrape time. */
    uint64_t now = (uint64_t)vf_now_ms();
    for (size_t p = 0; p < tenant->n_providers; p++) {
        vf_circuit_snapshot snap;
        if (vf_circuit_snapshot_get(b->rt->circuits, tenant->name, tenant->providers[p].name, NULL, now, &snap))
            vf_metrics_set_circuit_state(b->rt->metrics, tenant->name, tenant->providers[p].name, (int)snap.state);
    }
    vf_metrics_set_state_round_trips(b->rt->metrics, (long long)vf_fleet_round_trips(b->rt->fleet));
    size_t len = 0;
    char *text = vf_metrics_render(b->rt->metrics, tenant->name, &len);
    if (!text)
        return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "", "cannot render metrics");
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", VF_METRICS_CONTENT_TYPE);
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* Liveness answers 200 while we serve; readiness 503 when lookups cannot run. */
static vf_answer health_answer(vf_server *s, const vf_broker *b, bool readiness)
{
    vf_pool_status pool;
    vf_admission_stats queue;
    vf_pool_status_get(b, &pool);
    vf_admission_stats_get(s->admission, &queue);
    vf_health_inputs in = { .startup = s->opts.health, .pool = &pool, .queue = &queue,
                            .draining = atomic_load(&s->draining) };
    bool ok = vf_health_not_ready(&in) == NULL;
    vf_answer a = { .status = readiness && !ok ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK,
                    .doc = vf_health_json(&in) };
    return a;
}

enum MHD_Result vf_route(vf_server *s, vf_broker *b, struct MHD_Connection *c, const char *method,
                         const char *url, vf_request_ctx *ctx)
{
    bool get = strcmp(method, "GET") == 0;
    bool post = strcmp(method, "POST") == 0;
    bool lookup = strcmp(url, "/v1/lookup") == 0, health = strcmp(url, "/v1/health") == 0;
    bool spec = strcmp(url, "/v1/tool-spec") == 0, metrics = strcmp(url, "/metrics") == 0;
    bool ready = strcmp(url, "/v1/ready") == 0;
    const vf_tenant_config *tenant = vf_route_tenant(b->cfg, c, ctx);
    if (strcmp(url, "/mcp") == 0) {
        enum MHD_Result ret;
        if (vf_mcp_http_refused(c, tenant, method, ctx->too_large, &ret))
            return ret;
        return start_deferred(s, b, c, ctx, tenant, NULL);
    }
    if (!lookup && !health && !ready && !spec && !metrics)
        return send_error(c, MHD_HTTP_NOT_FOUND, "", "no such endpoint");
    if (lookup ? !post : !get)
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "", lookup ? "use POST" : "use GET");
    if (!tenant)
        return forbidden(c, ctx->tcp);
    if (lookup)
        return handle_lookup(s, b, tenant, c, ctx);
    if (metrics)
        return handle_metrics(b, tenant, c);
    if (spec) {
        json_t *doc = vf_tool_spec_as(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "format"),
                                      tenant->attempt_ceiling);
        if (!doc)
            return send_error(c, MHD_HTTP_BAD_REQUEST, "format", "format must be one of " VF_TOOL_SPEC_FORMATS);
        vf_answer a = { .status = MHD_HTTP_OK, .doc = doc };
        return vf_answer_send(c, &a);
    }
    vf_answer a = health_answer(s, b, ready);
    return vf_answer_send(c, &a);
}
