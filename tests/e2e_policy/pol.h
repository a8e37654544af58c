/* Support for the multi-tenant policy e2e tests: a verifetchd started from a
 * fully custom config (several tenants, TCP listener, quotas, ordering,
 * circuits; optionally inside a private mount namespace with its own
 * /etc/hosts), SIGHUP reloads, a client for the unix socket and the TCP
 * listener that keeps Retry-After, a client that runs under another uid, and
 * small readers for receipts and Prometheus text. Built on tests/e2e/harness.h:
 * the tmp dir, origins and teardown (which reaps every child) come from there. */
#ifndef VERIFETCH_E2E_POLICY_POL_H
#define VERIFETCH_E2E_POLICY_POL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tests/e2e/harness.h"

/* Egress for tenants that fetch from loopback origins. */
#define POL_EGRESS_LOOPBACK "egress = { allow = [ \"127.0.0.1/32\" ]; any_port = true; };"

typedef struct {
    const char *tenants;        /* body of `tenants = ( ... );` */
    const char *listen_extra;   /* extra settings in the listen group, e.g. tcp = "127.0.0.1:0"; */
    bool world_socket;          /* socket mode 0666 and the tmp dir traversable by any uid */
    const char *hosts;          /* non-NULL: run in a private mount ns with this as /etc/hosts */
    const char *root_extra;     /* extra top-level settings, e.g. state = { ... }; */
    unsigned max_concurrent;    /* worker.max_concurrent; 0 = 16 */
} pol_broker_opts;

typedef struct {
    hx_broker hx;               /* pid and paths: usable with hx_request, hx_lookup, hx_broker_log */
    int tcp_port;               /* from the "listening on tcp:" line; 0 = none */
    bool world_socket;
    char out_path[PATH_MAX];
} pol_broker;

/* Write the config, start verifetchd, wait (bounded) for its listening
 * line(s) and an accepting socket. Aborts the test on failure. */
void pol_broker_start(pol_broker *b, const pol_broker_opts *o);

/* Replace the config file atomically with the same listen/worker settings
 * and new tenants (or, with raw, exactly `text`), send SIGHUP and wait
 * (bounded) for the broker's verdict. Returns true for "configuration
 * reloaded", false for "reload rejected"; aborts when neither shows up. */
bool pol_reload(pol_broker *b, const pol_broker_opts *o, const char *raw);

/* A request to the broker; never asserts, so it is safe in threads. */
typedef struct {
    bool tcp;                   /* the TCP listener instead of the unix socket */
    const char *authorization;  /* whole Authorization header value, or NULL */
    const char *method;
    const char *path;
    const char *body;           /* NULL = none */
} pol_req;

/* retry_after (may be NULL) receives the Retry-After header value or "". */
hx_response pol_http(const pol_broker *b, const pol_req *q, char *retry_after, size_t ra_len);

/* The same request over the unix socket from a forked child that dropped to
 * uid/gid `id` before connecting (so SO_PEERCRED says `id`). Status 0 when
 * the child could not connect; body then says why. */
hx_response pol_request_as(const pol_broker *b, uid_t id, const char *method, const char *path,
                           const char *body);

/* POST /v1/lookup {"url": url <extra>} over the unix socket as the test's uid. */
hx_response pol_lookup(const pol_broker *b, const char *url, const char *extra);

/* "p1,p2": the providers of attempts_log in order ("" when absent). */
const char *pol_order(const hx_response *r, char *buf, size_t len);
/* String member of the receipt (tenant, provider_used, provider_order_reason) or NULL. */
const char *pol_receipt_str(const hx_response *r, const char *key);

/* Value of the sample whose series is exactly `series` (e.g.
 * verifetch_lookups_total{tenant="a",status="success"}), or -1 when absent. */
long long pol_metric(const char *text, const char *series);

/* Wait (bounded) until the origin logged a line containing needle. */
bool pol_origin_saw(const hx_origin *o, const char *needle, unsigned timeout_ms);

/* Lowercase hex SHA-256 of s (out >= 65 bytes). */
void pol_sha256_hex(const char *s, char *out);

/* snprintf that aborts the test on truncation. */
void pol_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Create a 0600 key file tmpdir/name holding `key`; its path goes to path. */
void pol_key_file(const char *name, const char *key, char *path, size_t len);

void pol_sleep_ms(unsigned ms);

#endif
