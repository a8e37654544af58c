/* Fleet e2e support: several real verifetchd instances sharing one throwaway
 * redis-server, on top of the policy harness (tests/e2e_policy/pol.h). */
#ifndef VERIFETCH_TESTS_FLEET_FL_H
#define VERIFETCH_TESTS_FLEET_FL_H

#include "redis_proc.h"
#include "tests/e2e_policy/pol.h"

#define FL_MAX_BROKERS 3

/* Starts n brokers with the same tenants, all with state = { redis = r->url; }. */
void fl_start_brokers(pol_broker *b, int n, const rp_redis *r, const char *tenants, bool world_socket);

/* POST /v1/lookup {"url": <origin url of path> <extra>} on b's unix socket as
 * uid (0 = the test's own); never asserts (thread-safe). */
hx_response fl_lookup(const pol_broker *b, uid_t uid, const hx_origin *o, const char *path, const char *extra,
                      char *retry_after, size_t ra_len);

/* Origin request lines containing needle ("GET /slow?ms=400 "). */
int fl_origin_requests(const hx_origin *o, const char *needle);

/* The receipt's "cache" field, or NULL. */
const char *fl_cache_field(const hx_response *r);

/* GET /v1/health "state". */
char *fl_state(const pol_broker *b);

#endif
