/* Resolve a host, vet every address against the egress policy, connect to the
 * first allowed one. The address that was vetted is the one connected, so a
 * second DNS answer cannot slip past the check (no rebinding window). */
#ifndef VERIFETCH_RESOLVE_CONNECT_H
#define VERIFETCH_RESOLVE_CONNECT_H

#include <stddef.h>
#include <stdint.h>

#include "policy/egress.h"

typedef enum {
    VF_CONNECT_OK = 0,
    VF_CONNECT_RESOLVE_FAILED,
    VF_CONNECT_DENIED,       /* every address was refused by policy */
    VF_CONNECT_FAILED,       /* allowed addresses, none answered */
    VF_CONNECT_TIMEOUT,
    VF_CONNECT_LOCAL,        /* the broker itself is out of fds or memory: not the
                              * origin's fault, never held against the provider */
} vf_connect_status;

typedef struct {
    int fd;                   /* connected, blocking, CLOEXEC; -1 on failure */
    char ip[64];              /* numeric address connected to */
    const char *denied_rule;  /* set when status == VF_CONNECT_DENIED */
    char detail[512];         /* human line for the receipt on failure */
} vf_connection;

/* host may be a bracketed IPv6 literal. deadline_ms is absolute (vf_now_ms). */
vf_connect_status vf_resolve_connect(const char *host, uint16_t port,
                                     const vf_egress_policy *policy,
                                     int64_t deadline_ms, vf_connection *out);

#endif
