/* Public-key decoders built by the zygote before it forks, for the keys in a
 * server's certificates. OpenSSL 3.0 decodes each certificate's key through
 * OSSL_DECODER_CTX_new_for_pkey, which walks every key manager and decoder
 * of every provider to build a context, uses it once and frees it: ~10 % of
 * an HTTPS worker's CPU on a one-certificate chain (3.2 and later cache
 * these contexts; Debian 12's 3.0 does not). The worker reuses the zygote's
 * instead. Only with a static libcrypto (the linker's --wrap reaches its
 * internal calls); elsewhere prepare does nothing and returns false. */
#ifndef VERIFETCH_SPKI_DECODERS_H
#define VERIFETCH_SPKI_DECODERS_H

#include <stdbool.h>

/* The zygote, after its TLS rehearsal: one decoder context per common key
 * type (EC, RSA, Ed25519). False when none could be built or this build
 * cannot reuse them (workers then build their own, as OpenSSL does). */
bool vf_spki_decoders_prepare(void);

/* Since the last prepare (a worker inherits the zygote's figures): keys
 * decoded with a prepared context, and decoder contexts asked of OpenSSL. */
typedef struct {
    unsigned reused;
    unsigned made;
} vf_spki_decoder_counts;
vf_spki_decoder_counts vf_spki_decoder_counts_get(void);

#endif
