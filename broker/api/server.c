#include "broker/api/server.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "broker/api/conn_deadline.h"
#include "broker/api/drain_refuser.h"
#include "broker/api/http_log.h"
#include "broker/api/lookup_log.h"
#include "broker/api/peer_counts.h"
#include "broker/api/request.h"
#include "broker/api/server_internal.h"
#include "broker/api/unix_listener.h"
#include "broker/memory_tune.h"
#include "ipc/ipc_frame.h"

static enum MHD_Result take_body(vf_request_ctx *ctx, const char *upload, size_t *upload_size)
{
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

/* First call: the head is in. Refuse what needs no body before reading it. */
static enum MHD_Result begin(vf_listener *l, struct MHD_Connection *c, const char *url, const char *method,
                             void **con_cls)
{
    vf_server *s = l->server;
    vf_request_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return MHD_NO;
    ctx->tcp = l->tcp;
    ctx->server = s;
    atomic_fetch_add(&s->in_flight, 1);
    *con_cls = ctx;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    ctx->conn = info ? info->socket_context : NULL;
    vf_conn_head_in(s->deadlines, ctx->conn);
    MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)VF_SERVER_IDLE_TIMEOUT_S);
    vf_broker *b = vf_holder_acquire(s->holder);
    enum MHD_Result ret = vf_route_head(s, b, c, method, url, ctx, &ctx->refused);
    vf_broker_unref(b);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size,
                                  void **con_cls)
{
    (void)version;
    vf_listener *l = cls;
    vf_request_ctx *ctx = *con_cls;
    if (!ctx)
        return begin(l, c, url, method, con_cls);
    if (ctx->refused) {   /* answered from the head: the body is read and dropped */
        if (*upload_size == 0)
            vf_conn_request_in(l->server->deadlines, ctx->conn);
        *upload_size = 0;
        return MHD_YES;
    }
    if (ctx->deferred)   /* resumed: the work is done */
        return vf_route_resumed(c, ctx);
    if (*upload_size > 0)
        return take_body(ctx, upload, upload_size);
    vf_conn_request_in(l->server->deadlines, ctx->conn);
    /* One snapshot for the whole request, even if SIGHUP swaps policy now. */
    vf_broker *b = vf_holder_acquire(l->server->holder);
    enum MHD_Result ret = vf_route(l->server, b, c, method, url, ctx);
    vf_broker_unref(b);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    vf_request_ctx *ctx = *con_cls;
    if (!ctx)
        return;
    vf_conn_answered(ctx->server->deadlines, ctx->conn);   /* keep-alive: the next head is due */
    vf_memory_request_done();
    atomic_fetch_sub(&ctx->server->in_flight, 1);
    vf_route_release(ctx);
    *con_cls = NULL;
}

/* Rate-limited with every other refusal (vf_request_log). */
static void note_refusal(uid_t uid, unsigned cap)
{
    char why[96];
    snprintf(why, sizeof why, "uid %u is over its %u connections", (unsigned)uid, cap);
    vf_request_log(stderr, "", "connection_refused", why);
}

/* Every connection gets its request deadlines (conn_deadline.h). Unix
 * side: count connections per uid; one over its cap is shut at once
 * (libmicrohttpd then closes it), so others' connections stay available. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    vf_listener *l = cls;
    vf_server *s = l->server;
    vf_conn *conn = *socket_context;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (conn && conn->peer_counted)
            vf_peer_counts_remove(s->peers, conn->uid);
        vf_conn_remove(s->deadlines, conn);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!info)
        return;
    if (!(conn = vf_conn_add(s->deadlines, info->connect_fd))) {
        shutdown(info->connect_fd, SHUT_RDWR);   /* out of memory: no deadline, no service */
        return;
    }
    *socket_context = conn;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (l->tcp || getsockopt(info->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return;
    conn->uid = cred.uid;
    conn->peer_counted = true;
    if (!vf_peer_counts_add(s->peers, cred.uid)) {
        shutdown(info->connect_fd, SHUT_RDWR);
        note_refusal(cred.uid, s->opts.per_peer_connections);
    }
}

static int start_listener(vf_listener *l, vf_server *s, int fd, bool tcp)
{
    l->server = s;
    l->fd = fd;
    l->tcp = tcp;
    /* epoll (no fd limit of select()), one thread, and suspended connections
     * for lookups: it never waits on a worker. One, not a pool: each pool
     * thread waits on the listening socket, so every connection woke them
     * all and all but one found nothing to accept. */
    l->daemon = MHD_start_daemon(
        MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC | MHD_USE_ERROR_LOG, 0,
        NULL, NULL, on_request, l,
        MHD_OPTION_EXTERNAL_LOGGER, vf_http_log, NULL,   /* first, or MHD logs some messages itself */
        MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, l,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, l,
        MHD_OPTION_CONNECTION_LIMIT, s->opts.max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, tcp ? s->opts.per_peer_connections : 0u,
        MHD_OPTION_CONNECTION_TIMEOUT, VF_SERVER_HEAD_TIMEOUT_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)VF_SERVER_CONNECTION_POOL_BYTES,
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024),
        MHD_OPTION_END);
    return l->daemon ? 0 : -1;
}

static void stop_listener(vf_listener *l)
{
    if (l->daemon)
        MHD_stop_daemon(l->daemon);
    if (l->fd >= 0)
        close(l->fd);
    l->daemon = NULL;
    l->fd = -1;
}

static void free_server(vf_server *s)
{
    vf_conn_deadlines_stop(s->deadlines);
    vf_hangup_watch_stop(s->hangups);
    vf_admission_free(s->admission);
    vf_peer_counts_free(s->peers);
    pthread_mutex_destroy(&s->resume_lock);
    free(s->socket_path);
    free(s);
}

/* Every VF_CONN_TICK_MS on the deadline thread. */
static void housekeeping(void *arg)
{
    vf_server *s = arg;
    vf_log_summaries(stderr, false);
    vf_memory_tick(atomic_load(&s->in_flight) == 0); /* the heap may shrink back once quiet */
}

static vf_server *new_server(vf_broker_holder *holder, const vf_server_options *o)
{
    vf_server *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->holder = holder;
    s->opts = *o;
    s->unix_side.fd = s->tcp_side.fd = -1;
    pthread_mutex_init(&s->resume_lock, NULL);
    s->admission = vf_admission_new(o->worker_slots);
    s->hangups = vf_hangup_watch_start();
    s->peers = vf_peer_counts_new(o->per_peer_connections);
    s->deadlines = vf_conn_deadlines_start(VF_SERVER_HEAD_TIMEOUT_S, VF_SERVER_BODY_TIMEOUT_S, housekeeping, s);
    if (!s->admission || !s->hangups || !s->peers || !s->deadlines) {
        free_server(s);
        return NULL;
    }
    return s;
}

vf_server *vf_server_start(vf_broker_holder *holder, const vf_server_options *o, char *err, size_t errlen)
{
    vf_server *s = new_server(holder, o);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int ufd = o->inherited_fd;
    if (ufd < 0) {
        struct stat bound;
        ufd = vf_unix_listen(o->socket_path, o->socket_mode, &bound, err, errlen);
        if (ufd < 0) {
            free_server(s);
            return NULL;
        }
        s->socket_path = strdup(o->socket_path);
        s->socket_dev = bound.st_dev;
        s->socket_ino = bound.st_ino;
    }
    if (start_listener(&s->unix_side, s, ufd, false) != 0) {
        snprintf(err, errlen, "cannot start the HTTP server on the unix socket");
        s->unix_side.fd = ufd;
        vf_server_stop(s, 0);
        return NULL;
    }
    if (o->tcp_fd >= 0 && start_listener(&s->tcp_side, s, o->tcp_fd, true) != 0) {
        snprintf(err, errlen, "cannot start the HTTP server on TCP %s", o->tcp_label);
        s->tcp_side.fd = o->tcp_fd;
        vf_server_stop(s, 0);
        return NULL;
    }
    return s;
}

void vf_server_resize(vf_server *s, unsigned worker_slots)
{
    vf_admission_resize(s->admission, worker_slots);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void wait_in_flight(vf_server *s, unsigned ms)
{
    int64_t give_up = vf_now_ms() + ms;
    while (atomic_load(&s->in_flight) > 0 && vf_now_ms() < give_up)
        sleep_ms(20);
}

/* Remove the path only while it is still the socket we bound: another
 * daemon may have replaced it since. */
static void unlink_if_ours(const vf_server *s)
{
    struct stat st;
    if (!s->socket_path || lstat(s->socket_path, &st) != 0)
        return;
    if (S_ISSOCK(st.st_mode) && st.st_dev == s->socket_dev && st.st_ino == s->socket_ino)
        unlink(s->socket_path);
    else
        fprintf(stderr, "verifetchd: %s is no longer our socket; leaving it in place\n", s->socket_path);
}

void vf_server_stop(vf_server *s, unsigned drain_ms)
{
    if (!s)
        return;
    unlink_if_ours(s);
    atomic_store(&s->draining, true);
    /* Stop accepting; the listening sockets stay open and answer 503 to
     * whoever is in the backlog or still arrives. */
    int fds[2] = { s->unix_side.daemon ? MHD_quiesce_daemon(s->unix_side.daemon) : -1,
                   s->tcp_side.daemon ? MHD_quiesce_daemon(s->tcp_side.daemon) : -1 };
    vf_drain_refuser *refuser = drain_ms ? vf_drain_refuser_start(fds, 2) : NULL;
    /* Let every request already begun finish and answer (each is bounded by
     * its own attempt deadlines); then cancel what is left. */
    wait_in_flight(s, drain_ms);
    if (atomic_load(&s->in_flight) > 0) {
        vf_hangup_watch_fire_all(s->hangups);
        wait_in_flight(s, 2000);
    }
    vf_drain_refuser_stop(refuser);
    pthread_mutex_lock(&s->resume_lock);
    s->stopped = true;
    unsigned left = s->threads;
    pthread_mutex_unlock(&s->resume_lock);
    stop_listener(&s->tcp_side);
    stop_listener(&s->unix_side);
    vf_log_summaries(stderr, true);
    if (left > 0)   /* their threads will still take s->resume_lock: leave s to the exit */
        fprintf(stderr, "verifetchd: %u requests still running at exit\n", left);
    else
        free_server(s);
}
