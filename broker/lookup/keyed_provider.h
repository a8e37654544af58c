/* The "http_api" provider: an HTTP API that fetches a URL for us and needs a
 * key. The worker talks plain HTTP to the credential proxy, which holds the
 * key; the worker never does. */
#ifndef VERIFETCH_KEYED_PROVIDER_H
#define VERIFETCH_KEYED_PROVIDER_H

#include <stdint.h>

#include "broker/lookup/attempt.h"
#include "broker/broker_context.h"

/* The caller holds a worker slot; cancel_fd (vf_cancel_fd(), or -1) kills
 * the running worker. */
void vf_keyed_fetch(const vf_broker *b, const vf_tenant_config *tenant, const vf_provider_config *provider,
                    const char *url, int64_t deadline_ms, int cancel_fd, vf_fetch_outcome *out);

/* The endpoint with {url} replaced by the percent-encoded target; malloc'd. */
char *vf_keyed_endpoint_url(const char *endpoint_template, const char *target_url);

#endif
