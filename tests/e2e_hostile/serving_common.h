/* What the serving tests (test_serving.c, test_hostile_clients.c,
 * test_pool_faults.c) share: one tenant "serving" allowed to reach the
 * loopback origin, a broker started on it, raw unix connections to it and
 * counting lines in its log. */
#ifndef VERIFETCH_SERVING_COMMON_H
#define VERIFETCH_SERVING_COMMON_H

#include <stddef.h>
#include <sys/un.h>

#include "hostile.h"

#define SV_CONF_MAX (2 * PATH_MAX + 1024)

/* The worker/tenant part of the config; tenant_extra (may be "") goes inside
 * the tenant's group, worker_extra (may be "") inside worker's. */
void sv_config_body(char *conf, unsigned slots, unsigned timeout_ms, const char *worker_extra,
                    const char *tenant_extra);
/* Starts origin (hx harness origin) and a broker with sv_config_body(slots, timeout_ms, "", ""). */
void sv_start(hx_origin *origin, hx_broker *broker, unsigned slots, unsigned timeout_ms);

struct sockaddr_un sv_broker_addr(const hx_broker *broker);
/* A connected unix socket to the broker (asserts). */
int sv_connect(const hx_broker *broker);
/* A lookup of url sent on a fresh raw connection, whose answer nobody reads
 * yet: returns the connected fd (closing it is hanging up). */
int sv_send_lookup(const hx_broker *broker, const char *url);
/* How many times needle occurs in the broker's log so far. */
size_t sv_count_in_log(const hx_broker *broker, const char *needle);
/* The same, after waiting up to wait_ms for a first occurrence: for lines
 * the broker writes after the event a test saw (a close, an answer). */
size_t sv_await_in_log(const hx_broker *broker, const char *needle, double wait_ms);

#endif
