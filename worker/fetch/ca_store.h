/* The CA bundle parsed once into an OpenSSL store. Parsing Debian's bundle
 * (~140 certificates) costs ~20 ms, so a zygote does it before forking and
 * every worker it forks verifies against the same, already-built store. */
#ifndef VERIFETCH_WORKER_CA_STORE_H
#define VERIFETCH_WORKER_CA_STORE_H

#include <curl/curl.h>
#include <openssl/x509.h>
#include <stddef.h>

/* Every certificate (and CRL) of a PEM bundle, with the verification flags
 * libcurl would set for a CA file. NULL with a reason when none parse. */
X509_STORE *vf_ca_store_from_pem(const void *pem, size_t len, size_t *n_certs,
                                 char *err, size_t errlen);

/* Makes curl's TLS context verify against store instead of any CA option. */
CURLcode vf_ca_store_attach(CURL *curl, X509_STORE *store);

#endif
