/* The optional loopback TCP listener (bearer-token tenants). */
#ifndef VERIFETCH_TCP_LISTENER_H
#define VERIFETCH_TCP_LISTENER_H

#include <stddef.h>
#include <sys/socket.h>

/* Bind and listen; *bound gets the real address (port 0 resolved) so it can
 * be put on every tenant's egress self list. -1 with err on failure. */
int vf_tcp_listen(const struct sockaddr *addr, socklen_t len, const char *label,
                  struct sockaddr_storage *bound, char *err, size_t errlen);

#endif
