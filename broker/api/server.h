/* The client API: HTTP/1.1 + JSON on a unix socket (libmicrohttpd). */
#ifndef VERIFETCH_SERVER_H
#define VERIFETCH_SERVER_H

#include <stddef.h>

#include "broker/broker_context.h"
#include "broker/api/health.h"

typedef struct vf_server vf_server;

typedef struct {
    const char *socket_path;          /* unix socket to create (ignored when inherited_fd >= 0) */
    unsigned socket_mode;
    int inherited_fd;                 /* a listening socket from systemd, or -1 */
    int tcp_fd;                       /* a bound, listening loopback TCP socket (vf_tcp_listen), or -1 */
    const char *tcp_label;            /* as configured, for messages */
    unsigned max_connections;         /* per listener */
    const vf_health *health;          /* what GET /v1/health reports */
} vf_server_options;

/* Start serving; NULL with err on failure. */
vf_server *vf_server_start(vf_broker_holder *holder, const vf_server_options *options, char *err,
                           size_t errlen);

/* Stop accepting and remove the socket, give requests already begun up to
 * drain_ms to finish and answer, then close everything. */
void vf_server_stop(vf_server *s, unsigned drain_ms);

#endif
