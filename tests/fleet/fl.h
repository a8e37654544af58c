/* Fleet e2e support: several real verifetchd instances sharing one throwaway
 * redis-server, on top of the policy harness (tests/e2e_policy/pol.h). */
#ifndef VERIFETCH_TESTS_FLEET_FL_H
#define VERIFETCH_TESTS_FLEET_FL_H

#include <pthread.h>

#include "redis_proc.h"
#include "tests/e2e_policy/pol.h"

#define FL_MAX_BROKERS 3

/* Starts n brokers with the same tenants, all with state = { redis = r->url; }. */
void fl_start_brokers(pol_broker *b, int n, const rp_redis *r, const char *tenants, bool world_socket);

/* Starts a throwaway redis-server, the loopback origin and n brokers of
 * tenants sharing it: the prologue of nearly every fleet test. */
void fl_start_fleet(rp_redis *r, hx_origin *o, pol_broker *b, int n, const char *tenants, bool world_socket);

/* Starts b[0] and b[1] sharing r, with two tenants of 2 worker slots between
 * them ("a" as uid 0 with quota a_quota, or none if NULL; "b" as 65534):
 * each tenant's per-pod fair share is 1 slot. */
void fl_start_two_slot_pair(pol_broker b[2], const rp_redis *r, const char *a_quota);

/* A lookup held on its own thread (a slow path keeps a slot busy). */
typedef struct {
    const pol_broker *b;
    const hx_origin *o;
    char path[64];
    char retry_after[32];
    hx_response r;
    pthread_t th;
} fl_held;

/* Starts h's lookup of h->path on h->b; fl_hold_join waits for its answer (in h->r). */
void fl_hold_start(fl_held *h);
void fl_hold_join(fl_held *h);

/* Lookup counts of fl_ask_together. */
typedef struct {
    int ok;          /* 200 and "success" */
    int throttled;   /* 429 with a Retry-After of at least 1 */
    int other;       /* anything else */
} fl_tally;

/* Brokers b[0..n-1] each asking per_broker lookups of path at once (one
 * thread per broker, its lookups one after another); the counts of all. */
fl_tally fl_ask_together(const pol_broker *b, int n, const hx_origin *o, const char *path, int per_broker);

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
