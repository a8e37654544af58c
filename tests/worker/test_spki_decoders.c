/* The zygote's public-key decoders (worker/fetch/spki_decoders.c), linked as
 * a -Dworker_static worker links them (static libcrypto, the linker's --wrap):
 * certificates' keys of each prepared type decode with the prepared context,
 * again and again, to the same keys OpenSSL's own contexts give; other types
 * and other requests still get contexts of their own; a key that does not
 * decode leaves nothing behind for the next one. */
#include <criterion/criterion.h>
#include <openssl/decoder.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <string.h>

#include "worker/fetch/spki_decoders.h"

static EVP_PKEY *new_key(const char *type, const char *curve)
{
    EVP_PKEY *key = curve ? EVP_PKEY_Q_keygen(NULL, NULL, type, curve)
                          : strcmp(type, "RSA") == 0 ? EVP_PKEY_Q_keygen(NULL, NULL, type, (size_t)2048)
                                                     : EVP_PKEY_Q_keygen(NULL, NULL, type);
    cr_assert_not_null(key, "cannot make a %s key", type);
    return key;
}

/* A self-signed certificate for key, as DER (what a server sends). */
static unsigned char *certificate_der(EVP_PKEY *key, int *len)
{
    X509 *cert = X509_new();
    cr_assert_not_null(cert);
    cr_assert(X509_set_version(cert, 2));
    cr_assert(ASN1_INTEGER_set(X509_get_serialNumber(cert), 7));
    cr_assert(X509_gmtime_adj(X509_getm_notBefore(cert), -60));
    cr_assert(X509_gmtime_adj(X509_getm_notAfter(cert), 3600));
    X509_NAME *name = X509_get_subject_name(cert);
    cr_assert(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"spki.test", -1, -1, 0));
    cr_assert(X509_set_issuer_name(cert, name));
    cr_assert(X509_set_pubkey(cert, key));
    int id = EVP_PKEY_get_id(key);
    const EVP_MD *md = id == EVP_PKEY_ED25519 || id == EVP_PKEY_ED448 ? NULL : EVP_sha256();   /* EdDSA hashes itself */
    cr_assert_gt(X509_sign(cert, key, md), 0);
    unsigned char *der = NULL;
    *len = i2d_X509(cert, &der);
    cr_assert_gt(*len, 0);
    X509_free(cert);
    return der;
}

/* Parses der as a server's certificate would be and checks its key is key's
 * and verifies the certificate's own signature. */
static void decodes_to(const unsigned char *der, int len, EVP_PKEY *key)
{
    const unsigned char *p = der;
    X509 *cert = d2i_X509(NULL, &p, len);
    cr_assert_not_null(cert);
    EVP_PKEY *got = X509_get0_pubkey(cert);
    cr_assert_not_null(got, "the certificate's key did not decode");
    cr_assert_eq(EVP_PKEY_eq(got, key), 1, "the decoded key is not the certificate's");
    cr_assert_eq(X509_verify(cert, got), 1, "the decoded key does not verify");
    X509_free(cert);
}

static vf_spki_decoder_counts counts(void)
{
    return vf_spki_decoder_counts_get();
}

Test(spki_decoders, prepared_types_decode_with_the_prepared_contexts_again_and_again)
{
    EVP_PKEY *keys[] = { new_key("EC", "P-256"), new_key("EC", "P-384"), new_key("RSA", NULL),
                         new_key("ED25519", NULL) };
    unsigned char *der[4];
    int len[4];
    for (int i = 0; i < 4; i++)
        der[i] = certificate_der(keys[i], &len[i]);
    cr_assert(vf_spki_decoders_prepare());
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 4; i++)
            decodes_to(der[i], len[i], keys[i]);
    cr_assert_eq(counts().reused, 12, "reused %u of 12", counts().reused);
    cr_assert_eq(counts().made, 0, "%u contexts built", counts().made);
    for (int i = 0; i < 4; i++) {
        OPENSSL_free(der[i]);
        EVP_PKEY_free(keys[i]);
    }
}

Test(spki_decoders, other_key_types_and_requests_get_contexts_of_their_own)
{
    EVP_PKEY *ed448 = new_key("ED448", NULL);
    int len;
    unsigned char *der = certificate_der(ed448, &len);
    cr_assert(vf_spki_decoders_prepare());
    decodes_to(der, len, ed448);
    cr_assert_eq(counts().reused, 0);
    cr_assert_eq(counts().made, 1);
    /* Not a certificate's key request (a PEM private key): OpenSSL's own. */
    EVP_PKEY *ec = new_key("EC", "P-256");
    BIO *pem = BIO_new(BIO_s_mem());
    cr_assert(PEM_write_bio_PrivateKey(pem, ec, NULL, NULL, 0, NULL, NULL));
    EVP_PKEY *back = PEM_read_bio_PrivateKey(pem, NULL, NULL, NULL);
    cr_assert_not_null(back);
    cr_assert_eq(EVP_PKEY_eq(back, ec), 1);
    cr_assert_eq(counts().reused, 0, "a private key was decoded with a public-key context");
    EVP_PKEY_free(back);
    BIO_free(pem);
    EVP_PKEY_free(ec);
    OPENSSL_free(der);
    EVP_PKEY_free(ed448);
}

Test(spki_decoders, a_key_that_does_not_decode_leaves_nothing_for_the_next)
{
    EVP_PKEY *key = new_key("EC", "P-256");
    int len;
    unsigned char *der = certificate_der(key, &len);
    /* The point's first byte (0x04, uncompressed) made invalid: the SPKI still
     * parses, its key does not. */
    unsigned char point[65];
    size_t plen = 0;
    cr_assert(EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", point, sizeof point, &plen));
    unsigned char *at = memmem(der, (size_t)len, point, plen);
    cr_assert_not_null(at);
    unsigned char *bad = OPENSSL_memdup(der, (size_t)len);
    bad[at - der] = 0x08;   /* no point form has this tag */
    cr_assert(vf_spki_decoders_prepare());
    const unsigned char *p = bad;
    X509 *cert = d2i_X509(NULL, &p, len);
    if (cert) {
        cr_assert_null(X509_get0_pubkey(cert), "an invalid point decoded to a key");
        X509_free(cert);
    }
    cr_assert_eq(counts().reused, 1);
    decodes_to(der, len, key);   /* the same prepared context, a good key */
    cr_assert_eq(counts().reused, 2);
    OPENSSL_free(bad);
    OPENSSL_free(der);
    EVP_PKEY_free(key);
}

Test(spki_decoders, a_second_request_while_one_is_lent_gets_its_own)
{
    cr_assert(vf_spki_decoders_prepare());
    EVP_PKEY *a = NULL, *b = NULL;
    OSSL_DECODER_CTX *first = OSSL_DECODER_CTX_new_for_pkey(&a, "DER", "SubjectPublicKeyInfo", "id-ecPublicKey",
                                                            EVP_PKEY_PUBLIC_KEY, NULL, NULL);
    OSSL_DECODER_CTX *second = OSSL_DECODER_CTX_new_for_pkey(&b, "DER", "SubjectPublicKeyInfo", "id-ecPublicKey",
                                                             EVP_PKEY_PUBLIC_KEY, NULL, NULL);
    cr_assert_not_null(first);
    cr_assert_not_null(second);
    cr_assert_neq(first, second);
    cr_assert_eq(counts().reused, 1);
    cr_assert_eq(counts().made, 1);
    /* Each writes its key where its own caller asked. */
    EVP_PKEY *ka = new_key("EC", "P-256"), *kb = new_key("EC", "P-256");
    unsigned char *da = NULL, *db = NULL;
    int la = i2d_PUBKEY(ka, &da), lb = i2d_PUBKEY(kb, &db);
    cr_assert_gt(la, 0);
    cr_assert_gt(lb, 0);
    const unsigned char *pa = da, *pb = db;
    size_t sa = (size_t)la, sb = (size_t)lb;
    cr_assert(OSSL_DECODER_from_data(second, &pb, &sb));
    cr_assert(OSSL_DECODER_from_data(first, &pa, &sa));
    cr_assert_not_null(a);
    cr_assert_not_null(b);
    cr_assert_eq(EVP_PKEY_eq(a, ka), 1);
    cr_assert_eq(EVP_PKEY_eq(b, kb), 1);
    OSSL_DECODER_CTX_free(first);
    OSSL_DECODER_CTX_free(second);
    /* Given back: the next request has the prepared one again. */
    EVP_PKEY *c = NULL;
    OSSL_DECODER_CTX *third = OSSL_DECODER_CTX_new_for_pkey(&c, "DER", "SubjectPublicKeyInfo", "id-ecPublicKey",
                                                            EVP_PKEY_PUBLIC_KEY, NULL, NULL);
    cr_assert_eq(third, first);
    OSSL_DECODER_CTX_free(third);
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
    EVP_PKEY_free(ka);
    EVP_PKEY_free(kb);
    OPENSSL_free(da);
    OPENSSL_free(db);
}
