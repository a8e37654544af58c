/* End-to-end harness: temp dirs, a throw-away test CA, loopback origin servers,
 * a real verifetchd with a generated config, and a client for its unix socket.
 * Every wait is bounded; hx_teardown() kills and reaps everything it started
 * (and any orphan, since each test process is made a child subreaper). */
#ifndef VERIFETCH_E2E_HARNESS_H
#define VERIFETCH_E2E_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "proc_inspect.h"   /* tests/support: pi_children, pi_read, ... */

/* Criterion fixtures: use as .init / .fini of every e2e TestSuite. */
void hx_setup(void);
void hx_teardown(void);

/* Per-test temp dir (created by hx_setup, removed by hx_teardown). */
const char *hx_tmpdir(void);
/* Writes $VERIFETCH_BUILD_ROOT/<rel> into buf and returns it. */
const char *hx_build_path(const char *rel, char *buf, size_t len);

typedef struct {
    char ca_pem[PATH_MAX];    /* CA certificate (what workers trust) */
    char cert_pem[PATH_MAX];  /* server certificate for 127.0.0.1 and localhost */
    char key_pem[PATH_MAX];
} hx_ca;

/* Generate a CA and one server certificate under tmpdir/<name>. Aborts the test on failure. */
void hx_ca_generate(const char *name, hx_ca *out);
/* The per-test default CA (generated on first use). */
const hx_ca *hx_default_ca(void);

typedef struct {
    pid_t pid;
    int port;
    char bind[64];
    char log_path[PATH_MAX];  /* CONNECT/REQ lines written by origin.py */
} hx_origin;

/* Start tests/origin/origin.py on bind (NULL = 127.0.0.1); tls NULL = plain HTTP. */
void hx_origin_start(hx_origin *o, const char *bind, const hx_ca *tls);
/* Number of accepted connections the origin has logged so far. */
int hx_origin_connections(const hx_origin *o);
/* Formats "http[s]://<bind>:<port><path>" into buf. */
const char *hx_origin_url(const hx_origin *o, bool tls, const char *path, char *buf, size_t len);

/* A TCP port on 127.0.0.1 that was bound and closed again: connect() is refused. */
int hx_closed_port(void);

typedef struct {
    unsigned timeout_ms;       /* tenant per-attempt timeout */
    unsigned attempt_ceiling;
    unsigned long max_body_bytes;
    const char *worker;        /* relative to build root; default worker/verifetch-worker */
    const char *test_hook;     /* worker.test_hook, NULL = unset */
    const char *providers;     /* libconfig list body; NULL = one direct provider "direct" */
    const char *egress;        /* libconfig egress group body; NULL = allow 127.0.0.1/32, any_port */
    const char *ca_file;       /* NULL = the default test CA */
    bool exec_workers;         /* worker.zygote = false: exec a worker per fetch */
    const char *tenant_extra;  /* more tenant settings; NULL = robots = "ignore" (tests that count
                                * origin requests exactly predate robots.txt; robots tests opt in) */
} hx_broker_opts;

void hx_broker_opts_default(hx_broker_opts *o);

typedef struct {
    pid_t pid;
    char socket_path[PATH_MAX];
    char config_path[PATH_MAX];
    char stderr_path[PATH_MAX];
} hx_broker;

/* Write the config, start verifetchd, wait (bounded) for its listening line and
 * an accepting socket. Aborts the test with the broker's stderr on failure. */
void hx_broker_start(hx_broker *b, const hx_broker_opts *o);
/* SIGTERM, bounded wait, SIGKILL. Returns the wait status. */
int hx_broker_stop(hx_broker *b);
/* Orderly-shutdown check: no worker left under the broker (bounded wait),
 * SIGTERM makes it exit cleanly and remove its socket, and no process other
 * than those in keep (e.g. origins) is left among our children. */
void hx_broker_stop_checked(hx_broker *b, const pid_t *keep, size_t n_keep);
/* Fail if the broker's stderr (shared with its workers) holds a sanitizer report.
 * Called after every request. */
void hx_assert_no_sanitizer_report(const hx_broker *b);
/* Tail of the broker's stderr (static buffer), for failure messages. */
const char *hx_broker_log(const hx_broker *b);

typedef struct {
    long status;          /* HTTP status, 0 when the request failed */
    int curl_code;        /* CURLcode */
    char *body;           /* NUL-terminated */
    size_t body_len;
    char content_type[128];
    json_t *json;         /* parsed body or NULL */
    double elapsed_ms;
} hx_response;

/* Raw request to the broker's unix socket. body may be NULL. */
hx_response hx_request(const hx_broker *b, const char *method, const char *path,
                       const char *body, size_t body_len);
/* POST /v1/lookup with a printf-formatted JSON body. */
hx_response hx_lookup(const hx_broker *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void hx_response_free(hx_response *r);

/* ---- receipt assertions --------------------------------------------------- */

#define HX_NULL (-1)   /* http_status must be JSON null */
#define HX_ANY  (-2)   /* http_status may be anything (int or null) */

typedef struct {
    const char *provider;
    const char *outcome;
    int http_status;
    const char *detail;            /* exact, or NULL */
    const char *detail_all[4];     /* case-insensitive substrings that must all appear */
    const char *detail_any[4];     /* at least one must appear (when any is given) */
    const char *wall;              /* expected "wall" family, or NULL = only type-checked */
} hx_attempt_expect;

typedef struct {
    bool ok;
    const char *url;               /* expected receipt url */
    int max_attempts;              /* -1: only range-checked */
    int ceiling;                   /* tenant attempt ceiling for the range check */
    int providers_available;
    const char *failure_reason;    /* NULL when ok */
    size_t n_attempts;
    hx_attempt_expect attempts[4];
} hx_receipt_expect;

/* Check the whole ToolResult + receipt against e and the contract's invariants.
 * Returns a malloc'd copy of the text block (caller frees). */
char *hx_check_tool_result(const hx_response *r, const hx_receipt_expect *e);
/* The receipt object inside r (borrowed). */
json_t *hx_receipt(const hx_response *r);

/* Case-insensitive substring test. */
bool hx_contains_ci(const char *hay, const char *needle);
/* Number of UTF-8 code points. */
size_t hx_utf8_len(const char *s);

/* ---- processes ------------------------------------------------------------ */

/* Spawn argv with stdout/stderr to the given files (NULL = /dev/null), wait at
 * most timeout_ms, kill on overrun. Returns the wait status, or -1 on timeout. */
int hx_run(char *const argv[], const char *stdout_path, const char *stderr_path,
           unsigned timeout_ms);
/* Wait (bounded) until pid has no children; returns the count left. */
size_t hx_wait_no_children(pid_t pid, unsigned timeout_ms);
/* Read a whole file (malloc'd, NUL-terminated) or NULL. */
char *hx_read_file(const char *path, size_t *len);
double hx_now_ms(void);

#endif
