/* A TLS handshake rehearsed once in the zygote, before any worker is forked. */
#ifndef VERIFETCH_TLS_REHEARSAL_H
#define VERIFETCH_TLS_REHEARSAL_H

#include <stdbool.h>

/* One full TLS 1.3 handshake (X25519 key share, ECDSA P-256 certificate,
 * chain and host name verified) and one record each way, between an
 * in-process client and server over a socketpair, with a key and certificate
 * made for the occasion and freed after. OpenSSL 3 fetches ciphers, digests,
 * key-exchange and signature algorithms from its providers on first use and
 * caches them; done here, every forked worker inherits the filled caches
 * instead of paying for them on its first real handshake. Uses no network
 * and no files. false if any step failed (the zygote works without it). */
bool vf_tls_rehearse(void);

#endif
