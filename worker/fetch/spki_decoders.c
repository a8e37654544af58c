#include "worker/fetch/spki_decoders.h"

#include <string.h>

#include <openssl/decoder.h>
#include <openssl/evp.h>

static vf_spki_decoder_counts counts;

vf_spki_decoder_counts vf_spki_decoder_counts_get(void)
{
    return counts;
}

#ifndef VF_WRAP_SPKI_DECODERS

bool vf_spki_decoders_prepare(void)
{
    counts = (vf_spki_decoder_counts){ 0 };
    return false;
}

#else

/* The worker is linked with --wrap for these three: every call of them from
 * the static libcrypto (x_pubkey.c, decoding a certificate's key) comes here,
 * the real ones are __real_. */
OSSL_DECODER_CTX *__real_OSSL_DECODER_CTX_new_for_pkey(EVP_PKEY **pkey, const char *input_type,
                                                       const char *input_struct, const char *keytype,
                                                       int selection, OSSL_LIB_CTX *libctx,
                                                       const char *propquery);
int __real_OSSL_DECODER_from_data(OSSL_DECODER_CTX *ctx, const unsigned char **pdata, size_t *pdata_len);
void __real_OSSL_DECODER_CTX_free(OSSL_DECODER_CTX *ctx);

OSSL_DECODER_CTX *__wrap_OSSL_DECODER_CTX_new_for_pkey(EVP_PKEY **pkey, const char *input_type,
                                                       const char *input_struct, const char *keytype,
                                                       int selection, OSSL_LIB_CTX *libctx,
                                                       const char *propquery);
int __wrap_OSSL_DECODER_from_data(OSSL_DECODER_CTX *ctx, const unsigned char **pdata, size_t *pdata_len);
void __wrap_OSSL_DECODER_CTX_free(OSSL_DECODER_CTX *ctx);

/* A context OpenSSL built once, whose construct step writes the key it
 * decodes to slot (the only thing it keeps per decode, besides the object
 * type it replaces each time). While lent, the key is moved on to where the
 * caller asked for it. The worker fetches on one thread, so a plain flag
 * says whether it is lent; a second request meanwhile gets a context of its own. */
typedef struct {
    const char *keytype;       /* as x_pubkey.c names it: the OID's long name */
    OSSL_DECODER_CTX *ctx;
    EVP_PKEY *slot;
    EVP_PKEY **caller;         /* non-NULL while lent */
} prepared_decoder;

static prepared_decoder prepared[] = {
    { .keytype = "id-ecPublicKey" },
    { .keytype = "rsaEncryption" },
    { .keytype = "ED25519" },
};
#define N_PREPARED (sizeof prepared / sizeof prepared[0])

bool vf_spki_decoders_prepare(void)
{
    bool any = false;
    for (size_t i = 0; i < N_PREPARED; i++) {
        prepared_decoder *p = &prepared[i];
        if (!p->ctx)
            p->ctx = __real_OSSL_DECODER_CTX_new_for_pkey(&p->slot, "DER", "SubjectPublicKeyInfo", p->keytype,
                                                          EVP_PKEY_PUBLIC_KEY, NULL, NULL);
        if (p->ctx && OSSL_DECODER_CTX_get_num_decoders(p->ctx) == 0) {
            __real_OSSL_DECODER_CTX_free(p->ctx);   /* nothing could decode this type */
            p->ctx = NULL;
        }
        any = any || p->ctx;
    }
    counts = (vf_spki_decoder_counts){ 0 };
    return any;
}

static prepared_decoder *lent(const OSSL_DECODER_CTX *ctx)
{
    for (size_t i = 0; ctx && i < N_PREPARED; i++)
        if (prepared[i].ctx == ctx && prepared[i].caller)
            return &prepared[i];
    return NULL;
}

/* Exactly what the certificate code asks; anything else is OpenSSL's. */
static bool is_certificate_key_request(EVP_PKEY **pkey, const char *input_type, const char *input_struct,
                                       const char *keytype, int selection, OSSL_LIB_CTX *libctx,
                                       const char *propquery)
{
    return pkey && keytype && input_type && input_struct && !libctx && !propquery &&
           selection == EVP_PKEY_PUBLIC_KEY && strcmp(input_type, "DER") == 0 &&
           strcmp(input_struct, "SubjectPublicKeyInfo") == 0;
}

OSSL_DECODER_CTX *__wrap_OSSL_DECODER_CTX_new_for_pkey(EVP_PKEY **pkey, const char *input_type,
                                                       const char *input_struct, const char *keytype,
                                                       int selection, OSSL_LIB_CTX *libctx,
                                                       const char *propquery)
{
    if (is_certificate_key_request(pkey, input_type, input_struct, keytype, selection, libctx, propquery)) {
        for (size_t i = 0; i < N_PREPARED; i++) {
            prepared_decoder *p = &prepared[i];
            if (p->ctx && !p->caller && strcmp(p->keytype, keytype) == 0) {
                p->caller = pkey;
                counts.reused++;
                return p->ctx;
            }
        }
    }
    counts.made++;
    return __real_OSSL_DECODER_CTX_new_for_pkey(pkey, input_type, input_struct, keytype, selection, libctx,
                                                propquery);
}

int __wrap_OSSL_DECODER_from_data(OSSL_DECODER_CTX *ctx, const unsigned char **pdata, size_t *pdata_len)
{
    prepared_decoder *p = lent(ctx);
    if (!p)
        return __real_OSSL_DECODER_from_data(ctx, pdata, pdata_len);
    p->slot = NULL;
    int ok = __real_OSSL_DECODER_from_data(ctx, pdata, pdata_len);
    if (p->slot)
        *p->caller = p->slot;   /* as a fresh context would have written it */
    p->slot = NULL;
    return ok;
}

void __wrap_OSSL_DECODER_CTX_free(OSSL_DECODER_CTX *ctx)
{
    prepared_decoder *p = lent(ctx);
    if (p) {
        p->caller = NULL;   /* kept for the next certificate */
        return;
    }
    __real_OSSL_DECODER_CTX_free(ctx);
}

#endif
