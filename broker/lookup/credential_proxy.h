/* Broker-side credential injection, in the style of Fly.io's tokenizer: the
 * worker speaks plain HTTP to us on a socketpair; we check the request is the
 * one we expect for this provider, add the key, carry it over our own
 * (TLS) connection and pump the provider's bytes back, masked but unparsed. */
#ifndef VERIFETCH_CREDENTIAL_PROXY_H
#define VERIFETCH_CREDENTIAL_PROXY_H

#include <openssl/ssl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "policy/config.h"

#define VF_PROXY_MAX_REQUEST_HEAD (16u * 1024u)

typedef struct {
    /* inputs */
    int worker_fd;                      /* broker end of the worker's socketpair */
    const vf_provider_config *provider; /* credential settings and the key */
    const vf_egress_policy *egress;
    SSL_CTX *tls_ctx;                   /* NULL for an http:// endpoint */
    const char *host;                   /* endpoint host as configured */
    uint16_t port;
    const char *expected_target;        /* exact request-target the worker must send */
    const char *body;                   /* rendered JSON body for a POST provider, else NULL */
    const char *const *mask;            /* secret forms masked in the response */
    const size_t *mask_lens;
    size_t n_mask;
    uint64_t max_response;              /* bytes pumped back at most */
    int64_t deadline_ms;
    /* outputs */
    bool failed;
    bool local;                         /* it failed for want of the broker's own fds or memory */
    char detail[512];
    pthread_t thread;
} vf_credential_proxy;

/* Start the proxy thread; 0 on success, else pthread_create's error number. */
int vf_credential_proxy_start(vf_credential_proxy *p);
/* Unblock and join it. */
void vf_credential_proxy_finish(vf_credential_proxy *p);

/* Exposed for tests: check a request head; NULL if acceptable, else why not. */
const char *vf_proxy_check_request(const char *head, size_t len, const char *expected_target,
                                   const char *expected_host);

#endif
