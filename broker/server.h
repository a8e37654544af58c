/* The client API: HTTP/1.1 + JSON on a unix socket (libmicrohttpd). */
#ifndef VERIFETCH_SERVER_H
#define VERIFETCH_SERVER_H

#include <stddef.h>

#include "broker/broker_context.h"

typedef struct vf_server vf_server;

/* Bind the unix socket (refusing to steal one a live daemon holds), start
 * serving. NULL with err on failure. */
vf_server *vf_server_start(vf_broker_holder *holder, const char *socket_path, unsigned mode,
                           unsigned max_connections, char *err, size_t errlen);

/* Stop accepting, let in-flight lookups finish, remove the socket. */
void vf_server_stop(vf_server *s);

#endif
