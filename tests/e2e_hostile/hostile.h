/* Helpers for the hostile-worker, hostile-page, shutdown and soak tests, on
 * top of the e2e harness (tests/e2e/harness.h): the hostile origin server,
 * /proc accounting of a broker (fds, descendants, memory), a multi-threaded
 * lookup client and a broker started from a caller-written config. */
#ifndef VERIFETCH_E2E_HOSTILE_H
#define VERIFETCH_E2E_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "harness.h"

/* Memory bounds are for a plain build; ASan's shadow memory and quarantine
 * inflate every figure, so sanitized builds only get a loose sanity bound. */
#if defined(__SANITIZE_ADDRESS__)
#define HH_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HH_UNDER_ASAN 1
#endif
#endif
#ifdef HH_UNDER_ASAN
#define HH_MEM_SCALE 8
#else
#define HH_MEM_SCALE 1
#endif

/* ---- the hostile origin (tests/e2e_hostile/hostile_origin.py) -------------- */

typedef struct {
    pid_t pid;
    int port;
    bool brotli;   /* it can serve /br-bomb */
    bool zstd;     /* it can serve /zstd-bomb */
} hh_origin;

/* Start it on 127.0.0.1 (port chosen by the kernel). Aborts the test on failure.
 * It dies with the test process, on stdin EOF, or after max_lifetime_s. */
void hh_origin_start(hh_origin *o, unsigned max_lifetime_s);
/* "http://127.0.0.1:<port><path>" */
const char *hh_url(const hh_origin *o, const char *path, char *buf, size_t len);

/* ---- /proc accounting ------------------------------------------------------- */

/* Descriptors, descendants and memory figures: pi_* in proc_inspect.h. */

typedef struct {
    long fds;
    size_t procs;
} hh_usage;

hh_usage hh_usage_of(pid_t pid);
/* The usage once it has stayed the same for 250 ms (bounded by timeout_ms):
 * a baseline that no just-finished request is still part of. */
hh_usage hh_usage_steady(pid_t pid, unsigned timeout_ms);
/* Waits (bounded) until pid's usage is back to base, then returns what it is:
 * workers and connection threads wind down just after their answer. */
hh_usage hh_usage_settle(pid_t pid, hh_usage base, unsigned timeout_ms);

/* ---- a concurrent client ----------------------------------------------------- */

typedef struct {
    long status;        /* HTTP status, 0 when the request failed */
    int curl_code;      /* CURLcode */
    char *body;         /* NUL-terminated, never NULL after hh_lookups */
    size_t body_len;
    double elapsed_ms;
    double started_ms;  /* hx_now_ms() when the request began */
} hh_reply;

/* Body of lookup i (malloc'd; freed by the client). */
typedef char *(*hh_body_fn)(size_t i, void *arg);

/* The lookup body for o's /slow?ms=<ms>&n=<i>: one URL per i, so nothing
 * (the broker's cache, a fleet's single flight) folds two lookups into one.
 * malloc'd; NULL when out of memory. */
char *hh_slow_lookup_body(const hx_origin *o, unsigned ms, size_t i);

/* n POST /v1/lookup requests from `threads` threads (one fresh connection per
 * request), each bounded by timeout_ms. Never asserts: results go to out[i]. */
void hh_lookups(const char *socket_path, size_t n, unsigned threads, hh_body_fn body_for, void *arg,
                unsigned timeout_ms, hh_reply *out);
/* The same, but no request starts after wall_deadline_ms (hx_now_ms() clock):
 * returns how many were issued, which are out[0 .. issued-1]. */
size_t hh_lookups_until(const char *socket_path, size_t n, unsigned threads, hh_body_fn body_for, void *arg,
                        unsigned timeout_ms, double wall_deadline_ms, hh_reply *out);
/* The same, and a thread whose request was refused (503) waits
 * refused_pause_us before its next: a load that keeps a queue full without
 * spending its n requests in the first second. */
size_t hh_lookups_paced(const char *socket_path, size_t n, unsigned threads, hh_body_fn body_for, void *arg,
                        unsigned timeout_ms, double wall_deadline_ms, unsigned refused_pause_us, hh_reply *out);
void hh_reply_free(hh_reply *r);
/* The reply as a harness response (takes the body; r is left empty). */
hx_response hh_as_response(hh_reply *r);

/* ---- a broker from a config the caller writes --------------------------------- */

/* Writes "listen = { socket = ...; mode = 0600; };" followed by config_body to
 * the broker's config file, starts verifetchd on it and waits until it accepts
 * connections. b can then be used with the harness (hx_request, ...). */
void hh_broker_start(hx_broker *b, const char *config_body);

#endif
