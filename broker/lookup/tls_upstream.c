#include "broker/lookup/tls_upstream.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker/lookup/resolve_connect.h"
#include "ipc/ipc_frame.h"

SSL_CTX *vf_upstream_tls_context(const uint8_t *ca_pem, size_t ca_len, char *err, size_t errlen)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        snprintf(err, errlen, "cannot create TLS context");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* Many providers close without close_notify; the worker's HTTP parser
     * checks Content-Length, so a truncated body is still caught there. */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    size_t loaded = 0;
    if (ca_pem && ca_len > 0) {
        BIO *bio = BIO_new_mem_buf(ca_pem, (int)ca_len);
        X509 *cert;
        while (bio && (cert = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
            if (X509_STORE_add_cert(store, cert) == 1)
                loaded++;
            X509_free(cert);
        }
        BIO_free(bio);
        ERR_clear_error();   /* the loop ends on a "no start line" error */
    }
    if (loaded == 0 && ca_pem && ca_len > 0) {
        snprintf(err, errlen, "the CA bundle holds no usable certificate");
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static int wait_fd(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        int64_t left = deadline_ms - vf_now_ms();
        if (left <= 0)
            return -1;
        struct pollfd p = { .fd = fd, .events = events };
        int n = poll(&p, 1, (int)left);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

/* Drive an SSL call that may want to read or write until done or deadline. */
static int ssl_wait(SSL *ssl, int rc, int fd, int64_t deadline_ms)
{
    int e = SSL_get_error(ssl, rc);
    if (e == SSL_ERROR_WANT_READ)
        return wait_fd(fd, POLLIN, deadline_ms);
    if (e == SSL_ERROR_WANT_WRITE)
        return wait_fd(fd, POLLOUT, deadline_ms);
    return -1;
}

static int handshake(vf_upstream *u, SSL_CTX *ctx, const char *host, int64_t deadline_ms, char *detail,
                     size_t dlen)
{
    u->ssl = SSL_new(ctx);
    if (!u->ssl || SSL_set_fd(u->ssl, u->fd) != 1) {
        snprintf(detail, dlen, "tls: cannot set up the session");
        return -1;
    }
    SSL_set_tlsext_host_name(u->ssl, host);
    /* Verify the name the operator configured, IP literal or DNS name. */
    X509_VERIFY_PARAM *param = SSL_get0_param(u->ssl);
    if (X509_VERIFY_PARAM_set1_ip_asc(param, host) != 1)
        SSL_set1_host(u->ssl, host);
    for (;;) {
        int rc = SSL_connect(u->ssl);
        if (rc == 1)
            return 0;
        if (ssl_wait(u->ssl, rc, u->fd, deadline_ms) != 0) {
            long vr = SSL_get_verify_result(u->ssl);
            if (vr != X509_V_OK)
                snprintf(detail, dlen, "tls: provider certificate rejected: %s",
                         X509_verify_cert_error_string(vr));
            else if (vf_now_ms() >= deadline_ms)
                snprintf(detail, dlen, "tls: handshake with the provider timed out");
            else
                snprintf(detail, dlen, "tls: handshake with the provider failed");
            ERR_clear_error();
            return -1;
        }
    }
}

int vf_upstream_open(vf_upstream *u, SSL_CTX *tls_ctx, const char *host, uint16_t port,
                     const vf_egress_policy *policy, int64_t deadline_ms, char *detail, size_t dlen)
{
    memset(u, 0, sizeof *u);
    u->fd = -1;
    vf_connection c;
    vf_connect_status cs = vf_resolve_connect(host, port, policy, deadline_ms, &c);
    if (cs == VF_CONNECT_LOCAL) {
        snprintf(detail, dlen, "%s", c.detail);   /* the broker's fault: no "provider endpoint" prefix */
        return VF_UPSTREAM_LOCAL;
    }
    if (cs != VF_CONNECT_OK) {
        snprintf(detail, dlen, "provider endpoint: %s", c.detail);
        return -1;
    }
    u->fd = c.fd;
    fcntl(u->fd, F_SETFL, fcntl(u->fd, F_GETFL) | O_NONBLOCK);
    if (tls_ctx && handshake(u, tls_ctx, host, deadline_ms, detail, dlen) != 0) {
        vf_upstream_close(u);
        return -1;
    }
    return 0;
}

int vf_upstream_write_all(vf_upstream *u, const void *buf, size_t len, int64_t deadline_ms)
{
    const char *p = buf;
    while (len > 0) {
        if (u->ssl) {
            size_t done = 0;
            int rc = SSL_write_ex(u->ssl, p, len, &done);
            if (rc == 1) {
                p += done;
                len -= done;
            } else if (ssl_wait(u->ssl, rc, u->fd, deadline_ms) != 0) {
                return -1;
            }
        } else {
            ssize_t n = send(u->fd, p, len, MSG_NOSIGNAL);
            if (n > 0) {
                p += n;
                len -= (size_t)n;
            } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                if (wait_fd(u->fd, POLLOUT, deadline_ms) != 0)
                    return -1;
            } else {
                return -1;
            }
        }
    }
    return 0;
}

ssize_t vf_upstream_read(vf_upstream *u, void *buf, size_t len, int64_t deadline_ms)
{
    for (;;) {
        if (u->ssl) {
            size_t got = 0;
            int rc = SSL_read_ex(u->ssl, buf, len, &got);
            if (rc == 1)
                return (ssize_t)got;
            int e = SSL_get_error(u->ssl, rc);
            if (e == SSL_ERROR_ZERO_RETURN)
                return 0;
            /* Providers that close without close_notify end the body too;
             * framing (Content-Length) is checked by the worker's HTTP parser. */
            if (e == SSL_ERROR_SYSCALL || e == SSL_ERROR_SSL) {
                ERR_clear_error();
                return e == SSL_ERROR_SYSCALL ? 0 : -1;
            }
            if (ssl_wait(u->ssl, rc, u->fd, deadline_ms) != 0)
                return -1;
        } else {
            ssize_t n = recv(u->fd, buf, len, 0);
            if (n >= 0)
                return n;
            if (errno != EAGAIN && errno != EINTR)
                return -1;
            if (wait_fd(u->fd, POLLIN, deadline_ms) != 0)
                return -1;
        }
    }
}

void vf_upstream_close(vf_upstream *u)
{
    if (u->ssl) {
        SSL_free(u->ssl);
        u->ssl = NULL;
    }
    if (u->fd >= 0)
        close(u->fd);
    u->fd = -1;
}
