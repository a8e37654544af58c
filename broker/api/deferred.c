#include "broker/api/deferred.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/api/hit_answer.h"
#include "broker/api/lookup_log.h"
#include "broker/api/metrics.h"
#include "broker/api/work_threads.h"
#include "broker/fleet/fleet.h"
#include "broker/fleet/fleet_lookup.h"
#include "broker/lookup/cancel.h"
#include "broker/lookup/lookup.h"
#include "broker/mcp/mcp_http.h"
#include "ipc/ipc_frame.h"

struct vf_deferred {
    atomic_int refs;            /* the connection's and the thread's */
    vf_server *server;
    struct MHD_Connection *conn;
    vf_broker *broker;          /* the snapshot the request started on */
    const vf_tenant_config *tenant;
    bool is_mcp;
    vf_lookup_request req;
    char *body;                 /* MCP: a copy of the message (the connection may go first at stop) */
    size_t len;
    vf_cancel cancel;
    bool has_cancel;
    uint64_t watch_id;
    vf_answer answer;
    vf_fleet_ahead *ahead;      /* the quota's store trip, sent before the thread began */
};

static void unref(vf_deferred *d)
{
    if (atomic_fetch_sub(&d->refs, 1) != 1)
        return;
    vf_answer_clear(&d->answer);
    vf_request_free(&d->req);
    if (d->has_cancel)
        vf_cancel_destroy(&d->cancel);
    free(d->body);
    free(d);
}

static vf_answer lookup_answer(vf_deferred *d)
{
    vf_broker *b = d->broker;
    const char *tenant = d->tenant->name;
    unsigned retry_after = 0;
    vf_fleet_lookup_prepare(b, d->tenant, &d->req, d->ahead);   /* the quota's store trip claims the cache too */
    d->ahead = NULL;
    vf_quota_verdict v = vf_quota_acquire(b->rt->quota, tenant, (uint64_t)vf_now_ms(), &retry_after);
    if (v != VF_QUOTA_OK)
        return vf_answer_throttled(b->rt->metrics, tenant, v, retry_after);
    int64_t started = vf_now_ms();
    size_t hit_len = 0;
    char *hit = vf_fleet_ready_hit(b, d->tenant, &d->req, &hit_len);
    if (hit) {
        vf_quota_release(b->rt->quota, tenant);
        return vf_hit_answer(b, d->tenant, &d->req, hit, hit_len, started);
    }
    json_t *result = vf_lookup_run(b, d->tenant, &d->req);
    vf_quota_release(b->rt->quota, tenant);
    if (vf_cancel_fired(d->req.cancel))
        vf_request_log(stderr, tenant, "client_gone", "the client hung up; the lookup was cancelled");
    unsigned key_wait = 0;
    if (vf_lookup_throttled(result, &key_wait)) {   /* every provider's key quota is used up */
        json_decref(result);
        vf_metrics_count_lookup(b->rt->metrics, tenant, VF_LOOKUP_THROTTLED);
        vf_request_log(stderr, tenant, "throttled", "provider_key");
        return vf_answer_busy(MHD_HTTP_TOO_MANY_REQUESTS, key_wait,
                              "provider key quota exceeded for every provider of this tenant");
    }
    if (result)
        vf_lookup_log(stderr, tenant, result, vf_now_ms() - started);
    vf_answer a = { .status = MHD_HTTP_OK, .doc = result };
    return a;
}

static void run(void *arg)
{
    vf_deferred *d = arg;
    vf_server *s = d->server;
    vf_fleet *fleet = d->broker->rt->fleet;
    vf_fleet_writes_begin(fleet);
    if (d->is_mcp) {
        unsigned status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        d->answer.doc = vf_mcp_http_answer(d->broker, d->tenant, d->body, d->len,
                                           d->has_cancel ? &d->cancel : NULL, &status);
        d->answer.status = status;
    } else {
        d->answer = lookup_answer(d);
    }
    vf_fleet_writes_send(fleet);   /* in the store before the client can see the answer */
    /* After a drain that gave up, the server is gone: touch nothing of it. */
    pthread_mutex_lock(&s->resume_lock);
    if (!s->stopped) {
        vf_hangup_watch_remove(s->hangups, d->watch_id);
        vf_admission_leave(s->admission, d->tenant->name);
        MHD_resume_connection(d->conn);
    }
    s->threads--;
    pthread_mutex_unlock(&s->resume_lock);
    vf_fleet_writes_settle(fleet);   /* their replies, off the answer's path */
    vf_broker_unref(d->broker);
    d->broker = NULL;
    unref(d);
}

static int start(vf_server *s, struct MHD_Connection *c, vf_request_ctx *ctx, vf_deferred *d)
{
    d->server = s;
    d->conn = c;
    atomic_init(&d->refs, 2);
    d->has_cancel = vf_cancel_init(&d->cancel) == 0;  /* without one the lookup just runs to its deadline */
    if (d->has_cancel && !d->is_mcp)
        d->req.cancel = &d->cancel;   /* MCP: handed to its backend in run() */
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    /* Suspend first: the thread may finish and resume before we return. */
    MHD_suspend_connection(c);
    if (d->has_cancel && info)
        d->watch_id = vf_hangup_watch_add(s->hangups, info->connect_fd, &d->cancel);
    ctx->deferred = d;
    pthread_mutex_lock(&s->resume_lock);
    s->threads++;
    pthread_mutex_unlock(&s->resume_lock);
    if (vf_work_threads_run(run, d) != 0) {
        pthread_mutex_lock(&s->resume_lock);
        s->threads--;
        pthread_mutex_unlock(&s->resume_lock);
        vf_hangup_watch_remove(s->hangups, d->watch_id);
        ctx->deferred = NULL;
        MHD_resume_connection(c);
        return -1;
    }
    return 0;
}

static void abandon(vf_deferred *d)
{
    d->broker = NULL;   /* the caller keeps its reference */
    memset(&d->req, 0, sizeof d->req);
    if (d->has_cancel)
        vf_cancel_destroy(&d->cancel);
    free(d->body);
    free(d);
}

int vf_deferred_lookup(vf_server *s, struct MHD_Connection *c, vf_request_ctx *ctx, vf_broker *b,
                       const vf_tenant_config *tenant, vf_lookup_request *req)
{
    vf_deferred *d = calloc(1, sizeof *d);
    if (!d)
        return -1;
    d->broker = b;
    d->tenant = tenant;
    d->req = *req;
    d->ahead = vf_fleet_lookup_ahead(b, tenant, &d->req);   /* travels while the thread starts */
    if (start(s, c, ctx, d) != 0) {
        vf_fleet_lookup_drop(b, d->ahead);
        *req = d->req;
        req->cancel = NULL;
        abandon(d);
        return -1;
    }
    memset(req, 0, sizeof *req);
    return 0;
}

int vf_deferred_mcp(vf_server *s, struct MHD_Connection *c, vf_request_ctx *ctx, vf_broker *b,
                    const vf_tenant_config *tenant)
{
    vf_deferred *d = calloc(1, sizeof *d);
    if (!d)
        return -1;
    d->broker = b;
    d->tenant = tenant;
    d->is_mcp = true;
    d->len = ctx->len;
    d->body = malloc(d->len + 1);
    if (!d->body) {
        free(d);
        return -1;
    }
    if (d->len)
        memcpy(d->body, ctx->body, d->len);
    d->body[d->len] = '\0';
    if (start(s, c, ctx, d) != 0) {
        abandon(d);
        return -1;
    }
    return 0;
}

vf_answer vf_deferred_answer(vf_deferred *d)
{
    vf_answer a = d->answer;
    memset(&d->answer, 0, sizeof d->answer);
    return a;
}

void vf_deferred_release(vf_deferred *d)
{
    if (d)
        unref(d);
}
