#include "broker/api/server.h"

#include <microhttpd.h>
#include <errno.h>
#include <stdatomic.h>
#include <time.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/api/health.h"
#include "broker/lookup/lookup.h"
#include "broker/api/lookup_log.h"
#include "broker/api/metrics.h"
#include "broker/api/request.h"
#include "broker/api/request_framing.h"
#include "broker/api/tool_spec.h"
#include "broker/api/tool_spec_format.h"
#include "broker/api/unix_listener.h"
#include "broker/api/json_response.h"
#include "broker/memory_tune.h"
#include "broker/mcp/mcp_http.h"
#include "ipc/ipc_frame.h"
#include "policy/tenant_auth.h"

/* One MHD daemon per listening socket; the flag says how callers are identified. */
typedef struct {
    struct vf_server *server;
    struct MHD_Daemon *daemon;
    int fd;
    bool tcp;
} listener;

struct vf_server {
    vf_broker_holder *holder;
    const vf_health *health;
    char *socket_path;        /* removed at stop; NULL when systemd owns the socket */
    listener unix_side;
    listener tcp_side;
    atomic_int in_flight;     /* requests begun and not yet completed */
};

/* Per-request state: the body as it arrives, capped. */
typedef struct {
    char *body;
    size_t len;
    bool too_large;
    bool tcp;          /* arrived on the TCP listener: identify by bearer token */
    struct vf_server *server;
} request_ctx;

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, json_t *doc)
{
    size_t len = 0;
    struct MHD_Response *r = vf_json_response(doc, &len); /* streams the page text; takes doc */
    vf_memory_note_response(len);
    if (!r) {
        static const char oom[] = "{\"error\":{\"field\":\"\",\"message\":\"broker out of memory\"}}";
        r = MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(r, "Content-Type", "application/json");
        enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_INTERNAL_SERVER_ERROR, r);
        MHD_destroy_response(r);
        return ret;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *field,
                                  const char *message)
{
    return send_json(c, status, json_pack("{s:{s:s, s:s}}", "error", "field", field, "message", message));
}

/* Unix callers are who the kernel says (SO_PEERCRED); TCP callers are who
 * their bearer token says. Nothing else identifies a tenant. */
static const vf_tenant_config *tenant_for(const vf_config *cfg, struct MHD_Connection *c, bool tcp)
{
    if (tcp) {
        const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
            return NULL;
        return vf_tenant_for_token(cfg, auth + 7);
    }
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (!info || getsockopt(info->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return NULL;
    return vf_tenant_for_uid(cfg, cred.uid);
}

static enum MHD_Result send_throttled(struct MHD_Connection *c, unsigned retry_after, const char *why)
{
    char *text = NULL;
    json_t *doc = json_pack("{s:{s:s, s:s, s:i}}", "error", "field", "", "message", why, "retry_after",
                            (int)retry_after);
    text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text)
        return MHD_NO;
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    char secs[16];
    snprintf(secs, sizeof secs, "%u", retry_after);
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "Retry-After", secs);
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_TOO_MANY_REQUESTS, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result handle_lookup(vf_broker *b, const vf_tenant_config *tenant, struct MHD_Connection *c,
                                     request_ctx *ctx)
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
    unsigned retry_after = 0;
    vf_quota_verdict v = vf_quota_acquire(b->rt->quota, tenant->name, (uint64_t)vf_now_ms(), &retry_after);
    if (v != VF_QUOTA_OK) {
        vf_request_free(&req);
        vf_metrics_count_lookup(b->rt->metrics, tenant->name, VF_LOOKUP_THROTTLED);
        vf_request_log(stderr, tenant->name, "throttled", vf_quota_verdict_name(v));
        return send_throttled(c, retry_after ? retry_after : 1,
                              v == VF_QUOTA_CONCURRENCY ? "too many lookups in flight for this tenant"
                                                        : "requests-per-minute quota exceeded for this tenant");
    }
    int64_t started = vf_now_ms();
    json_t *result = vf_lookup_run(b, tenant, &req);
    vf_quota_release(b->rt->quota, tenant->name);
    unsigned key_wait = 0;
    if (vf_lookup_throttled(result, &key_wait)) {   /* every provider's key quota is used up */
        json_decref(result);
        vf_request_free(&req);
        vf_metrics_count_lookup(b->rt->metrics, tenant->name, VF_LOOKUP_THROTTLED);
        vf_request_log(stderr, tenant->name, "throttled", "provider_key");
        return send_throttled(c, key_wait, "provider key quota exceeded for every provider of this tenant");
    }
    if (result)
        vf_lookup_log(stderr, tenant->name, result, vf_now_ms() - started);
    vf_request_free(&req);
    return send_json(c, MHD_HTTP_OK, result);
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

static enum MHD_Result route(vf_server *s, vf_broker *b, struct MHD_Connection *c, const char *method,
                             const char *url, request_ctx *ctx)
{
    bool get = strcmp(method, "GET") == 0;
    bool post = strcmp(method, "POST") == 0;
    bool lookup = strcmp(url, "/v1/lookup") == 0, health = strcmp(url, "/v1/health") == 0;
    bool spec = strcmp(url, "/v1/tool-spec") == 0, metrics = strcmp(url, "/metrics") == 0;
    if (strcmp(url, "/mcp") == 0)
        return vf_mcp_http_serve(c, b, tenant_for(b->cfg, c, ctx->tcp), method, ctx->body, ctx->len,
                                 ctx->too_large);
    if (!lookup && !health && !spec && !metrics)
        return send_error(c, MHD_HTTP_NOT_FOUND, "", "no such endpoint");
    if (lookup ? !post : !get)
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "", lookup ? "use POST" : "use GET");
    const vf_tenant_config *tenant = tenant_for(b->cfg, c, ctx->tcp);
    if (!tenant)
        return send_error(c, MHD_HTTP_FORBIDDEN, "",
                          ctx->tcp ? "missing or unknown bearer token" : "this caller is not mapped to any tenant");
    if (lookup)
        return handle_lookup(b, tenant, c, ctx);
    if (metrics)
        return handle_metrics(b, tenant, c);
    if (spec) {
        json_t *doc = vf_tool_spec_as(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "format"),
                                      tenant->attempt_ceiling);
        return doc ? send_json(c, MHD_HTTP_OK, doc)
                   : send_error(c, MHD_HTTP_BAD_REQUEST, "format", "format must be one of " VF_TOOL_SPEC_FORMATS);
    }
    return send_json(c, MHD_HTTP_OK, vf_health_json(s->health));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size,
                                  void **con_cls)
{
    (void)version;
    listener *l = cls;
    vf_server *s = l->server;
    request_ctx *ctx = *con_cls;
    if (!ctx) {
        ctx = calloc(1, sizeof *ctx);
        if (!ctx)
            return MHD_NO;
        ctx->tcp = l->tcp;
        ctx->server = s;
        atomic_fetch_add(&s->in_flight, 1);
        *con_cls = ctx;
        const char *framing = vf_request_framing_problem(c);
        return framing ? send_error(c, MHD_HTTP_BAD_REQUEST, "", framing) : MHD_YES;
    }
    if (*upload_size > 0) {
        /* Keep reading past the cap (so the client gets an answer) but store nothing. */
        if (!ctx->too_large && ctx->len + *upload_size <= VF_MAX_REQUEST_BODY) {
            char *grown = realloc(ctx->body, ctx->len + *upload_size + 1);
            if (!grown)
                return MHD_NO;
            memcpy(grown + ctx->len, upload, *upload_size);
            ctx->body = grown;
            ctx->len += *upload_size;
            ctx->body[ctx->len] = '\0';
        } else {
            ctx->too_large = true;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    /* One snapshot for the whole request, even if SIGHUP swaps policy now. */
    vf_broker *b = vf_holder_acquire(s->holder);
    enum MHD_Result ret = route(s, b, c, method, url, ctx);
    vf_broker_unref(b);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    request_ctx *ctx = *con_cls;
    if (ctx) {
        bool last = atomic_fetch_sub(&ctx->server->in_flight, 1) == 1;
        free(ctx->body);
        free(ctx);
        *con_cls = NULL;
        if (last)
            vf_memory_idle(); /* the heap may shrink back after a burst */
    }
}

static int start_listener(listener *l, vf_server *s, int fd, bool tcp, unsigned max_connections)
{
    l->server = s;
    l->fd = fd;
    l->tcp = tcp;
    l->daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG, 0,
        NULL, NULL, on_request, l,
        MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, l,
        MHD_OPTION_CONNECTION_LIMIT, max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024),
        MHD_OPTION_END);
    return l->daemon ? 0 : -1;
}


static void quiesce_listener(listener *l)
{
    if (l->daemon)
        MHD_quiesce_daemon(l->daemon);
}

static void stop_listener(listener *l)
{
    if (l->daemon)
        MHD_stop_daemon(l->daemon);
    if (l->fd >= 0)
        close(l->fd);
    l->daemon = NULL;
    l->fd = -1;
}

vf_server *vf_server_start(vf_broker_holder *holder, const vf_server_options *o, char *err, size_t errlen)
{
    vf_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->holder = holder;
    s->health = o->health;
    s->unix_side.fd = s->tcp_side.fd = -1;
    int ufd = o->inherited_fd;
    if (ufd < 0) {
        ufd = vf_unix_listen(o->socket_path, o->socket_mode, err, errlen);
        if (ufd < 0) {
            free(s);
            return NULL;
        }
        s->socket_path = strdup(o->socket_path);
    }
    if (start_listener(&s->unix_side, s, ufd, false, o->max_connections) != 0) {
        snprintf(err, errlen, "cannot start the HTTP server on the unix socket");
        s->unix_side.fd = ufd;
        vf_server_stop(s, 0);
        return NULL;
    }
    if (o->tcp_fd >= 0 && start_listener(&s->tcp_side, s, o->tcp_fd, true, o->max_connections) != 0) {
        snprintf(err, errlen, "cannot start the HTTP server on TCP %s", o->tcp_label);
        s->tcp_side.fd = o->tcp_fd;
        vf_server_stop(s, 0);
        return NULL;
    }
    return s;
}

void vf_server_stop(vf_server *s, unsigned drain_ms)
{
    if (!s)
        return;
    /* Stop accepting and remove the path, so no new client finds us... */
    if (s->socket_path)
        unlink(s->socket_path);
    quiesce_listener(&s->tcp_side);
    quiesce_listener(&s->unix_side);
    /* ...then let every request already begun finish and answer (each is
     * bounded by its own attempt deadlines) before connections are closed. */
    int64_t give_up = vf_now_ms() + drain_ms;
    while (atomic_load(&s->in_flight) > 0 && vf_now_ms() < give_up) {
        struct timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    stop_listener(&s->tcp_side);
    stop_listener(&s->unix_side);
    free(s->socket_path);
    free(s);
}
