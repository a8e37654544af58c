#include "worker/fetch/ca_store.h"

#include <limits.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <stdio.h>

X509_STORE *vf_ca_store_from_pem(const void *pem, size_t len, size_t *n_certs,
                                 char *err, size_t errlen)
{
    *n_certs = 0;
    if (len == 0 || len > INT_MAX) {
        snprintf(err, errlen, "CA bundle is empty or too large");
        return NULL;
    }
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    STACK_OF(X509_INFO) *infos = bio ? PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL) : NULL;
    X509_STORE *store = infos ? X509_STORE_new() : NULL;
    size_t added = 0;
    for (int i = 0; store && i < sk_X509_INFO_num(infos); i++) {
        X509_INFO *info = sk_X509_INFO_value(infos, i);
        if (info->x509 && X509_STORE_add_cert(store, info->x509) == 1)
            added++;
        if (info->crl)
            X509_STORE_add_crl(store, info->crl);
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
    BIO_free(bio);
    ERR_clear_error();
    if (!store || added == 0) {
        snprintf(err, errlen, "CA bundle holds no usable certificate");
        X509_STORE_free(store);
        return NULL;
    }
    /* What libcurl 7.88 sets on the store it builds from a CA file. */
    X509_STORE_set_flags(store, X509_V_FLAG_TRUSTED_FIRST | X509_V_FLAG_PARTIAL_CHAIN);
    *n_certs = added;
    return store;
}

/* curl calls this after applying its own TLS options to a fresh context. */
static CURLcode use_store(CURL *curl, void *ssl_ctx, void *store)
{
    (void)curl;
    SSL_CTX_set1_cert_store(ssl_ctx, store);
    return CURLE_OK;
}

CURLcode vf_ca_store_attach(CURL *curl, X509_STORE *store)
{
    CURLcode rc = curl_easy_setopt(curl, CURLOPT_SSL_CTX_FUNCTION, use_store);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(curl, CURLOPT_SSL_CTX_DATA, store);
    return rc;
}
