/* robots.txt for the direct provider (tenants[].robots = "obey", the
 * default): each hop's origin has its robots.txt fetched through the same
 * path as a page (egress rules, resolve-and-connect, a confined worker) and
 * cached per origin for the tenant's robots_ttl_s. RFC 9309 for what a
 * status means: 2xx rules apply, 4xx (or a redirect chain too long) allows
 * everything, 5xx disallows everything until a later fetch succeeds. A
 * robots.txt that cannot be reached at all decides nothing: the page fetch
 * that follows reports its own transport error. Concurrent lookups to an
 * origin not in the cache share one fetch (robots_flight.h). */
#ifndef VERIFETCH_ROBOTS_H
#define VERIFETCH_ROBOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "broker/broker_context.h"
#include "broker/lookup/attempt.h"

/* How robots.txt itself is fetched: the direct provider's own path, for a
 * tenant that ignores robots.txt (so it is not asked about itself). */
typedef void (*vf_robots_fetch_fn)(const vf_broker *b, const vf_tenant_config *tenant, const char *url,
                                   int64_t deadline_ms, int cancel_fd, vf_fetch_outcome *out);

/* True when tenant may fetch url. False: out is forced to unusable_content
 * with a detail that starts "robots.txt disallows". */
bool vf_robots_permit(const vf_broker *b, const vf_tenant_config *tenant, const char *url, int64_t deadline_ms,
                      int cancel_fd, vf_robots_fetch_fn fetch, vf_fetch_outcome *out);

#endif
