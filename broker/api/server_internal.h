/* Shared by the server's parts (server.c: daemons and connection life;
 * routes.c: what each endpoint answers; deferred.c: work that runs in a
 * thread of its own while the connection is suspended). Not for other modules. */
#ifndef VERIFETCH_SERVER_INTERNAL_H
#define VERIFETCH_SERVER_INTERNAL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "broker/api/admission.h"
#include "broker/api/answer.h"
#include "broker/api/hangup_watch.h"
#include "broker/api/server.h"

struct vf_conn;
struct vf_conn_deadlines;
struct vf_deferred;
struct vf_peer_counts;

/* One MHD daemon per listening socket; the flag says how callers are identified. */
typedef struct {
    struct vf_server *server;
    struct MHD_Daemon *daemon;
    int fd;
    bool tcp;
} vf_listener;

struct vf_server {
    vf_broker_holder *holder;
    vf_server_options opts;
    char *socket_path;        /* removed at stop if it is still our socket; NULL when systemd owns it */
    dev_t socket_dev;
    ino_t socket_ino;
    vf_listener unix_side;
    vf_listener tcp_side;
    atomic_int in_flight;     /* requests begun and not yet completed */
    atomic_bool draining;     /* SIGTERM: new requests get 503 */
    vf_admission *admission;
    vf_hangup_watch *hangups;
    struct vf_peer_counts *peers;
    struct vf_conn_deadlines *deadlines;   /* absolute request head/body deadlines */
    pthread_mutex_t resume_lock;
    bool stopped;             /* under resume_lock: the daemons are gone, resume nothing */
    unsigned threads;         /* under resume_lock: deferred work still running */
};

/* Per-request state. */
typedef struct {
    char *body;
    size_t len;
    bool too_large;
    bool tcp;          /* arrived on the TCP listener: identify by bearer token */
    bool refused;      /* answered as soon as the head came in */
    struct vf_server *server;
    struct vf_conn *conn;           /* its connection's deadlines; NULL if none */
    struct vf_deferred *deferred;   /* suspended work; its answer is sent on resume */
} vf_request_ctx;

/* routes.c: the request is complete (body in ctx). */
enum MHD_Result vf_route(vf_server *s, vf_broker *b, struct MHD_Connection *c, const char *method,
                         const char *url, vf_request_ctx *ctx);
/* routes.c: the head is in, the body is not: refuse now what needs no body
 * (TCP callers without a valid token, draining). MHD_YES + *refused=false = go on. */
enum MHD_Result vf_route_head(vf_server *s, vf_broker *b, struct MHD_Connection *c, const char *method,
                              const char *url, vf_request_ctx *ctx, bool *refused);
/* routes.c: deferred work finished and the connection was resumed. */
enum MHD_Result vf_route_resumed(struct MHD_Connection *c, vf_request_ctx *ctx);
/* routes.c: the request is over; frees ctx. */
void vf_route_release(vf_request_ctx *ctx);
const vf_tenant_config *vf_route_tenant(const vf_config *cfg, struct MHD_Connection *c, const vf_request_ctx *ctx);

#endif
