#include "broker/server.h"

#include <microhttpd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/lookup.h"
#include "broker/request.h"
#include "broker/tool_spec.h"
#include "broker/unix_listener.h"

struct vf_server {
    struct MHD_Daemon *daemon;
    vf_broker_holder *holder;
    char *socket_path;
    int listen_fd;
};

/* Per-request state: the body as it arrives, capped. */
typedef struct {
    char *body;
    size_t len;
    bool too_large;
} request_ctx;

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text) {
        static const char oom[] = "{\"error\":{\"field\":\"\",\"message\":\"broker out of memory\"}}";
        struct MHD_Response *r = MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom,
                                                                 MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(r, "Content-Type", "application/json");
        enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_INTERNAL_SERVER_ERROR, r);
        MHD_destroy_response(r);
        return ret;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
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

/* Map the unix peer to a tenant: an explicit uid match wins, then a tenant
 * that accepts any peer. */
static const vf_tenant_config *tenant_for(const vf_config *cfg, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct ucred cred;
    socklen_t len = sizeof cred;
    bool have_cred = info && getsockopt(info->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
    const vf_tenant_config *any = NULL;
    for (size_t i = 0; i < cfg->n_tenants; i++) {
        const vf_tenant_config *t = &cfg->tenants[i];
        if (t->n_uids == 0 && !any)
            any = t;
        for (size_t u = 0; have_cred && u < t->n_uids; u++)
            if (t->uids[u] == cred.uid)
                return t;
    }
    return any;
}

static enum MHD_Result handle_lookup(vf_broker *b, struct MHD_Connection *c, request_ctx *ctx)
{
    if (ctx->too_large)
        return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "", "request body is larger than 64 KiB");
    const vf_tenant_config *tenant = tenant_for(b->cfg, c);
    if (!tenant)
        return send_error(c, MHD_HTTP_FORBIDDEN, "", "this caller is not mapped to any tenant");
    vf_lookup_request req;
    vf_request_error err;
    if (vf_request_parse(ctx->body ? ctx->body : "", ctx->len, &req, &err) != 0)
        return send_error(c, MHD_HTTP_BAD_REQUEST, err.field, err.message);
    json_t *result = vf_lookup_run(b, tenant, &req);
    vf_request_free(&req);
    return send_json(c, MHD_HTTP_OK, result);
}

static enum MHD_Result route(vf_broker *b, struct MHD_Connection *c, const char *method, const char *url,
                             request_ctx *ctx)
{
    bool get = strcmp(method, "GET") == 0;
    bool post = strcmp(method, "POST") == 0;
    if (strcmp(url, "/v1/lookup") == 0)
        return post ? handle_lookup(b, c, ctx)
                    : send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "", "use POST for /v1/lookup");
    if (strcmp(url, "/v1/health") == 0)
        return get ? send_json(c, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"))
                   : send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "", "use GET for /v1/health");
    if (strcmp(url, "/v1/tool-spec") == 0) {
        const vf_tenant_config *t = tenant_for(b->cfg, c);
        unsigned ceiling = t ? t->attempt_ceiling : VF_DEFAULT_ATTEMPT_CEILING;
        return get ? send_json(c, MHD_HTTP_OK, vf_tool_spec(ceiling))
                   : send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "", "use GET for /v1/tool-spec");
    }
    return send_error(c, MHD_HTTP_NOT_FOUND, "", "no such endpoint");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size,
                                  void **con_cls)
{
    (void)version;
    vf_server *s = cls;
    request_ctx *ctx = *con_cls;
    if (!ctx) {
        ctx = calloc(1, sizeof *ctx);
        if (!ctx)
            return MHD_NO;
        *con_cls = ctx;
        return MHD_YES;
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
    enum MHD_Result ret = route(b, c, method, url, ctx);
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
        free(ctx->body);
        free(ctx);
        *con_cls = NULL;
    }
}

vf_server *vf_server_start(vf_broker_holder *holder, const char *socket_path, unsigned mode,
                           unsigned max_connections, char *err, size_t errlen)
{
    vf_server *s = calloc(1, sizeof *s);
    if (!s || !(s->socket_path = strdup(socket_path))) {
        free(s);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->holder = holder;
    s->listen_fd = vf_unix_listen(socket_path, mode, err, errlen);
    if (s->listen_fd < 0) {
        free(s->socket_path);
        free(s);
        return NULL;
    }
    unsigned limit = max_connections;
    s->daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG, 0, NULL, NULL,
        on_request, s,
        MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_CONNECTION_LIMIT, limit,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024),
        MHD_OPTION_END);
    if (!s->daemon) {
        snprintf(err, errlen, "cannot start the HTTP server on %s", socket_path);
        close(s->listen_fd);
        unlink(socket_path);
        free(s->socket_path);
        free(s);
        return NULL;
    }
    return s;
}

void vf_server_stop(vf_server *s)
{
    if (!s)
        return;
    /* Quiesce first so no new client gets in while lookups drain. */
    MHD_quiesce_daemon(s->daemon);
    unlink(s->socket_path);
    MHD_stop_daemon(s->daemon);
    close(s->listen_fd);
    free(s->socket_path);
    free(s);
}
