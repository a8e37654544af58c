/* The client API: HTTP/1.1 + JSON on a unix socket and an optional loopback
 * TCP listener (libmicrohttpd, epoll, one server thread per listener). A
 * lookup never holds a server thread: its connection is suspended while it
 * runs in a thread of its own, so health and metrics answer under any load. */
#ifndef VERIFETCH_SERVER_H
#define VERIFETCH_SERVER_H

#include <stddef.h>

#include "broker/broker_context.h"
#include "broker/api/health.h"

typedef struct vf_server vf_server;

/* Absolute, however the bytes trickle in (broker/api/conn_deadline.h): */
#define VF_SERVER_HEAD_TIMEOUT_S 5u   /* a request head, from the accept or the previous answer */
#define VF_SERVER_BODY_TIMEOUT_S 10u  /* its body, from the head */
#define VF_SERVER_IDLE_TIMEOUT_S 60u  /* inactivity while an answer is sent */
/* libmicrohttpd's per-connection pool (request head, read and write buffers;
 * bodies are kept by us). Above 32 KiB it is a fresh mmap per connection,
 * zeroed page by page and unmapped with a TLB shoot-down on every core: that
 * was most of the broker's CPU when it refused ~800 connections a second. */
#define VF_SERVER_CONNECTION_POOL_BYTES (32u * 1024u)

typedef struct {
    const char *socket_path;          /* unix socket to create (ignored when inherited_fd >= 0) */
    unsigned socket_mode;
    int inherited_fd;                 /* a listening socket from systemd, or -1 */
    int tcp_fd;                       /* a bound, listening loopback TCP socket (vf_tcp_listen), or -1 */
    const char *tcp_label;            /* as configured, for messages */
    unsigned max_connections;         /* per listener */
    unsigned per_peer_connections;    /* per uid (unix) / per address (TCP) */
    unsigned worker_slots;            /* worker.max_concurrent: sizes the admission queue */
    const vf_health *health;          /* what GET /v1/health reports */
} vf_server_options;

/* Start serving; NULL with err on failure. */
vf_server *vf_server_start(vf_broker_holder *holder, const vf_server_options *options, char *err,
                           size_t errlen);

/* Reload: worker.max_concurrent changed. */
void vf_server_resize(vf_server *s, unsigned worker_slots);

/* Stop accepting (queued and new connections get 503 + Retry-After), remove
 * the socket if it is still ours, give requests already begun up to drain_ms
 * to finish and answer, cancel what is left, then close everything. */
void vf_server_stop(vf_server *s, unsigned drain_ms);

#endif
