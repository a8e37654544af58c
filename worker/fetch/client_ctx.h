/* A TLS client context built by the zygote before it forks, for the worker's
 * one connection: libcurl 7.88 makes a new SSL_CTX per connection, and OpenSSL
 * 3.0's SSL_CTX_new asks the providers for every cipher, digest, group and
 * signature algorithm each time (~1.2 M instructions, 16% of a worker's TLS). */
#ifndef VERIFETCH_CLIENT_CTX_H
#define VERIFETCH_CLIENT_CTX_H

#include <stdbool.h>

/* The zygote, after its rehearsals: one fresh, unused client context kept for
 * the next SSL_CTX_new(TLS_client_method()). False if OpenSSL could not make it
 * (workers then make their own, as before). */
bool vf_client_ctx_prepare(void);

/* Since the last vf_client_ctx_prepare() (a worker inherits the zygote's
 * figures): client or server contexts OpenSSL made on request, and prepared
 * ones handed out instead. */
typedef struct {
    unsigned made;
    unsigned taken;
} vf_client_ctx_counts;
vf_client_ctx_counts vf_client_ctx_counts_get(void);

#endif
