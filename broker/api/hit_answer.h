/* A lookup-cache hit answered as stored (broker/fleet/fleet_lookup.h,
 * vf_fleet_ready_hit): counted and logged like a lookup, the stored JSON sent
 * without parsing or re-encoding, and without a worker. */
#ifndef VERIFETCH_HIT_ANSWER_H
#define VERIFETCH_HIT_ANSWER_H

#include "broker/api/answer.h"
#include "broker/api/request.h"
#include "broker/broker_context.h"

/* Takes hit (malloc'd JSON text). The caller has admitted it under the
 * tenant's quota (and given the quota back: a hit holds nothing). */
vf_answer vf_hit_answer(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req, char *hit,
                        size_t len, int64_t started_ms);

#endif
