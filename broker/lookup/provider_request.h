/* The request the credential proxy sends to a keyed provider: method, the
 * fixed endpoint target, the key where the config puts it, the configured
 * static headers and, for POST, the body the broker rendered. Nothing in it
 * comes from the worker. */
#ifndef VERIFETCH_PROVIDER_REQUEST_H
#define VERIFETCH_PROVIDER_REQUEST_H

#include <stddef.h>

#include "policy/config.h"

/* HTTP/1.0 with identity coding, so the response has no chunk framing or
 * compression for the mask to miss. body is NULL for GET. malloc'd, NUL-
 * terminated (the body is JSON text, so it holds no NUL); the caller wipes it,
 * since it contains the key. */
char *vf_provider_request(const vf_provider_config *pc, const char *target, const char *host_header,
                          const char *body);

#endif
