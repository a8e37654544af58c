#include "worker/fetch/tls_rehearsal.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#define REHEARSAL_HOST "rehearsal.invalid"
/* Each side makes progress on every step, so a handful suffices; the bound
 * only guards against a loop if something unexpected stalls. */
#define MAX_STEPS 64

static X509 *self_signed(EVP_PKEY *key)
{
    X509 *cert = X509_new();
    X509_NAME *name = X509_NAME_new();
    bool ok = cert && name && X509_set_version(cert, 2) &&
              ASN1_INTEGER_set(X509_get_serialNumber(cert), 1) &&
              X509_gmtime_adj(X509_getm_notBefore(cert), -60) &&
              X509_gmtime_adj(X509_getm_notAfter(cert), 3600) &&
              X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)REHEARSAL_HOST, -1, -1,
                                         0) &&
              X509_set_subject_name(cert, name) && X509_set_issuer_name(cert, name) &&
              X509_set_pubkey(cert, key);
    if (ok) {
        /* A SAN, as real certificates have: host name checks use it. */
        X509V3_CTX v3;
        X509V3_set_ctx_nodb(&v3);
        X509V3_set_ctx(&v3, cert, cert, NULL, NULL, 0);
        X509_EXTENSION *san = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "DNS:" REHEARSAL_HOST);
        ok = san && X509_add_ext(cert, san, -1);
        X509_EXTENSION_free(san);
    }
    ok = ok && X509_sign(cert, key, EVP_sha256()) > 0;
    X509_NAME_free(name);
    if (!ok) {
        X509_free(cert);
        return NULL;
    }
    return cert;
}

/* 1 done, 0 wants another step, -1 failed. */
static int step(SSL *ssl)
{
    int r = SSL_do_handshake(ssl);
    if (r == 1)
        return 1;
    int e = SSL_get_error(ssl, r);
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

static bool handshake(SSL *client, SSL *server)
{
    int c = 0, s = 0;
    for (int i = 0; i < MAX_STEPS && (c != 1 || s != 1); i++) {
        if (c != 1 && (c = step(client)) < 0)
            return false;
        if (s != 1 && (s = step(server)) < 0)
            return false;
    }
    return c == 1 && s == 1;
}

/* One application record each way: the AEAD in both directions. */
static bool exchange(SSL *from, SSL *to)
{
    static const char msg[] = "rehearsal";
    char got[sizeof msg];
    if (SSL_write(from, msg, sizeof msg) != (int)sizeof msg)
        return false;
    for (int i = 0; i < MAX_STEPS; i++) {
        int r = SSL_read(to, got, sizeof got);
        if (r == (int)sizeof msg)
            return true;
        if (r <= 0 && SSL_get_error(to, r) != SSL_ERROR_WANT_READ)
            return false;
    }
    return false;
}

bool vf_tls_rehearse(void)
{
    bool ok = false;
    int sv[2] = { -1, -1 };
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = key ? self_signed(key) : NULL;
    SSL_CTX *sctx = SSL_CTX_new(TLS_server_method()), *cctx = SSL_CTX_new(TLS_client_method());
    SSL *server = NULL, *client = NULL;
    if (!cert || !sctx || !cctx || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0)
        goto out;
    SSL_CTX_set_min_proto_version(cctx, TLS1_2_VERSION);
    /* As a worker verifies: against a store, with the host name checked. */
    if (SSL_CTX_use_certificate(sctx, cert) != 1 || SSL_CTX_use_PrivateKey(sctx, key) != 1 ||
        X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), cert) != 1)
        goto out;
    SSL_CTX_set_options(sctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(sctx, 0);
    SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
    server = SSL_new(sctx);
    client = SSL_new(cctx);
    if (!server || !client || SSL_set_fd(server, sv[0]) != 1 || SSL_set_fd(client, sv[1]) != 1 ||
        SSL_set_tlsext_host_name(client, REHEARSAL_HOST) != 1 || SSL_set1_host(client, REHEARSAL_HOST) != 1)
        goto out;
    SSL_set_accept_state(server);
    SSL_set_connect_state(client);
    ok = handshake(client, server) && SSL_get_verify_result(client) == X509_V_OK && exchange(client, server) &&
         exchange(server, client);
    if (ok) {
        SSL_shutdown(client);
        SSL_shutdown(server);
    }
out:
    SSL_free(client);
    SSL_free(server);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
    X509_free(cert);
    EVP_PKEY_free(key);
    if (sv[0] >= 0)
        close(sv[0]);
    if (sv[1] >= 0)
        close(sv[1]);
    return ok;
}
