/* The "direct" provider: the broker resolves, vets and connects; a confined
 * worker speaks HTTP/TLS over that socket. Redirects are followed here, in
 * the broker, with the egress policy applied to every hop. */
#ifndef VERIFETCH_DIRECT_PROVIDER_H
#define VERIFETCH_DIRECT_PROVIDER_H

#include <stdint.h>

#include "broker/lookup/attempt.h"
#include "broker/broker_context.h"

#define VF_MAX_REDIRECTS 5

/* render: VF_RENDER_* for the worker's HTML rendering. The caller holds a
 * worker slot; cancel_fd (vf_cancel_fd(), or -1) kills the running worker. */
void vf_direct_fetch(const vf_broker *b, const vf_tenant_config *tenant, const char *url, uint32_t render,
                     int64_t deadline_ms, int cancel_fd, vf_fetch_outcome *out);

#endif
