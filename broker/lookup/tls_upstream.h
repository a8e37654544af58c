/* The broker's own connection to a keyed provider: plain TCP or verified TLS
 * (OpenSSL), every operation bounded by the attempt deadline. */
#ifndef VERIFETCH_TLS_UPSTREAM_H
#define VERIFETCH_TLS_UPSTREAM_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/egress.h"

typedef struct {
    int fd;
    SSL *ssl;        /* NULL for plain http endpoints */
} vf_upstream;

/* One client context for the broker's lifetime, verifying against ca_pem
 * (the configured bundle). NULL with err on failure. */
SSL_CTX *vf_upstream_tls_context(const uint8_t *ca_pem, size_t ca_len, char *err, size_t errlen);

/* Resolve + vet + connect (same egress policy as direct fetches), then the
 * TLS handshake with SNI and host name verification when tls_ctx != NULL.
 * 0 on success; VF_UPSTREAM_LOCAL when the broker itself had no descriptor
 * or memory for the connection (detail starts "local: "); -1 otherwise. */
#define VF_UPSTREAM_LOCAL (-2)
int vf_upstream_open(vf_upstream *u, SSL_CTX *tls_ctx, const char *host, uint16_t port,
                     const vf_egress_policy *policy, int64_t deadline_ms, char *detail, size_t dlen);

int vf_upstream_write_all(vf_upstream *u, const void *buf, size_t len, int64_t deadline_ms);
/* >0 bytes read, 0 clean end of stream, -1 error or deadline. */
ssize_t vf_upstream_read(vf_upstream *u, void *buf, size_t len, int64_t deadline_ms);
void vf_upstream_close(vf_upstream *u);

#endif
