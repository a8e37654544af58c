/* Test plumbing for the worker: a one-connection loopback origin (plain or
 * TLS) in a thread, throwaway certificates from the openssl CLI, and a runner
 * that spawns a real worker binary the way the broker does. */
#ifndef VERIFETCH_TESTS_WORKER_HARNESS_H
#define VERIFETCH_TESTS_WORKER_HARNESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/ipc_messages.h"

#define ORIGIN_MAX_REQUEST 16384

typedef struct {
    /* set by the test */
    const char *response;      /* raw bytes written after the request; NULL = never answer */
    size_t response_len;
    const char *cert_file;     /* TLS when both set */
    const char *key_file;
    /* filled in */
    uint16_t port;
    char request[ORIGIN_MAX_REQUEST + 1];
    size_t request_len;
    int accepted;              /* connections accepted (at most 1) */
    bool tls_handshake_ok;
    int listen_fd;
    int pair_fd;               /* origin_start_pair: our end of the socketpair */
    bool use_pair;
    pthread_t thread;
} test_origin;

/* Binds 127.0.0.1:0 and serves one connection from a thread (10 s bound). */
void origin_start(test_origin *o);
/* Serves one exchange over a socketpair instead (the keyed-provider channel:
 * plain HTTP to the broker); returns the end to pass to the worker. */
int origin_start_pair(test_origin *o);
void origin_stop(test_origin *o);

/* A TCP socket connected to the origin, as the broker would pass it. */
int origin_connect(const test_origin *o);

typedef struct {
    char dir[64];
    char ca_pem[128];
    char cert_pem[128];
    char key_pem[128];
} test_pki;

/* CA + server certificate for localhost/127.0.0.1, made with the openssl CLI. */
void pki_create(test_pki *p);
void pki_destroy(test_pki *p);
/* Reads a whole file (malloc'd). */
uint8_t *slurp(const char *path, size_t *len);

typedef struct {
    int wstatus;
    bool got_frame;
    vf_ipc_err recv_err;      /* of the result frame */
    vf_ipc_err decode_err;    /* of its payload */
    vf_result res;            /* valid when decode_err == VF_IPC_OK */
    bool extra_bytes;         /* anything after the one frame */
    pid_t pid;                /* when run_worker_keep_alive was used */
    int ipc;                  /* idem */
} worker_run;

/* $VERIFETCH_BUILD_ROOT/worker/<name>. */
const char *worker_path(const char *name);

/* Spawns the worker (argv {"verifetch-worker"}, empty env, fd 3 = IPC), sends
 * job with pass_fd (-1: none), reads one result and waits for the exit;
 * SIGKILLs it after wait_ms. */
void run_worker(const char *exe, const vf_job *job, int pass_fd, int wait_ms, worker_run *out);

/* Like run_worker but returns after the result frame, leaving the process
 * running (out->pid, out->ipc); the caller kills and reaps it. */
void run_worker_keep_alive(const char *exe, const vf_job *job, int pass_fd, int wait_ms,
                           worker_run *out);

void worker_run_free(worker_run *r);

/* A job with sane defaults for url (the caller's buffer). */
vf_job basic_job(char *url);

/* "HTTP/1.1 200 OK" response with the given headers (CRLF-joined, may be "")
 * and body, Content-Length and Connection: close added. malloc'd. */
char *http_response(const char *status_line, const char *headers, const char *body,
                    size_t body_len, size_t *out_len);

#define FETCH_PAGE_WAIT_MS 15000

/* The production worker fetches body, served at 200 with the header line
 * ctype_header from a loopback origin, under job render mask render; asserts
 * a clean exit and a decoded result without transport error. */
void fetch_page(const char *ctype_header, const char *body, size_t body_len, uint32_t render,
                worker_run *r);

/* fetch_page of a NUL-terminated UTF-8 HTML page; returns r->res.text. */
char *html_text_of(const char *body, uint32_t render, worker_run *r);

#endif
