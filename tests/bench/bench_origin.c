/* Benchmark origin: a small, fast loopback HTTP and HTTPS server so the
 * benchmark measures the clients, not the origin (a Python origin would be
 * the bottleneck). Keep-alive is off: every response closes its connection,
 * which is what a verifetch lookup sees (one fresh connection per fetch).
 *
 *   verifetch-bench-origin CERT.pem KEY.pem
 *
 * Listens on 127.0.0.1, two ephemeral ports, and prints one line
 *   "origin: plain=<port> tls=<port>\n"
 * then serves until killed (it also dies with its parent).
 * Paths: /10k, /1m and /8m (text/html, exactly 10240, 1048576 and 8388608
 * bytes) and /10k.txt, /1m.txt and /8m.txt (the same sizes as text/plain);
 * anything else is 404.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "bench_page.h"

/* Enough blocking acceptors per port for the benchmark's highest concurrency (64). */
#define ACCEPTORS_PER_PORT 80
#define MAX_REQUEST_HEAD 8192
#define IO_TIMEOUT_S 10

typedef struct {
    const char *path;
    const char *ctype;
    char *body;
    size_t len;
} page;

#define N_PAGES 6
static page pages[N_PAGES];
static SSL_CTX *tls_ctx;

static int make_pages(void)
{
    const struct { const char *path; size_t len; bool html; } spec[N_PAGES] = {
        { "/10k", 10240, true }, { "/1m", 1048576, true }, { "/8m", 8388608, true },
        { "/10k.txt", 10240, false }, { "/1m.txt", 1048576, false }, { "/8m.txt", 8388608, false },
    };
    for (int i = 0; i < N_PAGES; i++) {
        pages[i].path = spec[i].path;
        pages[i].ctype = spec[i].html ? "text/html; charset=utf-8" : "text/plain; charset=utf-8";
        pages[i].len = spec[i].len;
        pages[i].body = bench_page_body(spec[i].len, spec[i].html);
        if (!pages[i].body)
            return -1;
    }
    return 0;
}

static const page *find_page(const char *head)
{
    if (strncmp(head, "GET ", 4) != 0)
        return NULL;
    const char *p = head + 4;
    const char *sp = strchr(p, ' ');
    if (!sp)
        return NULL;
    size_t n = (size_t)(sp - p);
    for (int i = 0; i < N_PAGES; i++)
        if (strlen(pages[i].path) == n && memcmp(pages[i].path, p, n) == 0)
            return &pages[i];
    return NULL;
}

/* One connection's transport: plain fd or TLS. */
typedef struct {
    int fd;
    SSL *ssl;
} conn;

static long conn_read(conn *c, char *buf, size_t len)
{
    if (c->ssl) {
        int r = SSL_read(c->ssl, buf, (int)len);
        return r > 0 ? r : -1;
    }
    for (;;) {
        ssize_t r = read(c->fd, buf, len);
        if (r < 0 && errno == EINTR)
            continue;
        return r > 0 ? (long)r : -1;
    }
}

static int conn_write(conn *c, const char *buf, size_t len)
{
    while (len > 0) {
        long w;
        if (c->ssl) {
            int chunk = len > (1u << 30) ? (1 << 30) : (int)len;
            w = SSL_write(c->ssl, buf, chunk);
        } else {
            w = send(c->fd, buf, len, MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR)
                continue;
        }
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

static void serve(conn *c)
{
    char head[MAX_REQUEST_HEAD + 1];
    size_t used = 0;
    while (used < MAX_REQUEST_HEAD) {
        long r = conn_read(c, head + used, MAX_REQUEST_HEAD - used);
        if (r <= 0)
            return;
        used += (size_t)r;
        head[used] = '\0';
        if (strstr(head, "\r\n\r\n"))
            break;
    }
    if (!strstr(head, "\r\n\r\n"))
        return;
    const page *pg = find_page(head);
    char hdr[256];
    if (!pg) {
        static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        conn_write(c, nf, sizeof nf - 1);
        return;
    }
    int h = snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                                      "Connection: close\r\n\r\n", pg->ctype, pg->len);
    if (c->ssl) {
        if (conn_write(c, hdr, (size_t)h) == 0)
            conn_write(c, pg->body, pg->len);
        return;
    }
    struct iovec iov[2] = { { hdr, (size_t)h }, { pg->body, pg->len } };
    size_t total = (size_t)h + pg->len, sent = 0;
    while (sent < total) {
        struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        sent += (size_t)w;
        /* Advance the iovecs past what went out. */
        size_t adv = (size_t)w;
        for (int i = 0; i < 2; i++) {
            size_t t = adv < iov[i].iov_len ? adv : iov[i].iov_len;
            iov[i].iov_base = (char *)iov[i].iov_base + t;
            iov[i].iov_len -= t;
            adv -= t;
        }
    }
}

static void handle(int fd, bool tls)
{
    struct timeval tv = { .tv_sec = IO_TIMEOUT_S };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    conn c = { .fd = fd, .ssl = NULL };
    if (tls) {
        c.ssl = SSL_new(tls_ctx);
        if (!c.ssl || SSL_set_fd(c.ssl, fd) != 1 || SSL_accept(c.ssl) != 1) {
            ERR_clear_error();
            SSL_free(c.ssl);
            close(fd);
            return;
        }
    }
    serve(&c);
    if (c.ssl) {
        SSL_shutdown(c.ssl);
        SSL_free(c.ssl);
        ERR_clear_error();
    } else {
        shutdown(fd, SHUT_WR);
    }
    close(fd);
}

typedef struct {
    int listen_fd;
    bool tls;
} acceptor_arg;

static void *acceptor(void *p)
{
    const acceptor_arg *a = p;
    for (;;) {
        int fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE)
                continue;
            perror("origin: accept");
            exit(1);
        }
        handle(fd, a->tls);
    }
    return NULL;
}

/* 127.0.0.1 unless the caller names another address: the MCP-server
 * benchmark binds one that exists only on its own network namespace's lo,
 * because the npm fetch server it measures refuses loopback addresses. */
static int listen_on(struct in_addr addr, unsigned short *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = addr };
    socklen_t sl = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 1024) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

static SSL_CTX *make_tls_ctx(const char *cert, const char *key)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx)
        return NULL;
    /* Every client here starts cold (fresh process or fresh handle), so give
     * each one a full handshake: no tickets, no session cache. */
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
        ERR_print_errors_fp(stderr);
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

int main(int argc, char **argv)
{
    struct in_addr addr = { .s_addr = htonl(INADDR_LOOPBACK) };
    if ((argc != 3 && argc != 4) || (argc == 4 && inet_pton(AF_INET, argv[3], &addr) != 1)) {
        fprintf(stderr, "usage: %s CERT.pem KEY.pem [IPv4 address, default 127.0.0.1]\n", argv[0]);
        return 2;
    }
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    signal(SIGPIPE, SIG_IGN);
    if (make_pages() != 0 || !(tls_ctx = make_tls_ctx(argv[1], argv[2]))) {
        fprintf(stderr, "origin: setup failed\n");
        return 1;
    }
    static acceptor_arg args[2];
    unsigned short ports[2];
    for (int i = 0; i < 2; i++) {
        args[i].tls = i == 1;
        args[i].listen_fd = listen_on(addr, &ports[i]);
        if (args[i].listen_fd < 0) {
            perror("origin: listen");
            return 1;
        }
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < ACCEPTORS_PER_PORT; k++) {
            pthread_t t;
            if (pthread_create(&t, &attr, acceptor, &args[i]) != 0) {
                fprintf(stderr, "origin: cannot start acceptor threads\n");
                return 1;
            }
        }
    printf("origin: plain=%u tls=%u\n", ports[0], ports[1]);
    fflush(stdout);
    for (;;)
        pause();
}
