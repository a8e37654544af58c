#include "harness.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ORIGIN_WAIT_MS 10000

/* ---- origin ----------------------------------------------------------- */

typedef struct {
    int fd;
    SSL *ssl;
} conn;

static ssize_t conn_read(conn *c, char *buf, size_t n)
{
    if (c->ssl) {
        int k = SSL_read(c->ssl, buf, (int)n);
        return k > 0 ? k : 0;
    }
    ssize_t k = recv(c->fd, buf, n, 0);
    return k > 0 ? k : 0;
}

static void conn_write(conn *c, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t k;
        if (c->ssl) {
            int w = SSL_write(c->ssl, buf, n > 65536 ? 65536 : (int)n);
            k = w > 0 ? w : -1;
        } else {
            k = send(c->fd, buf, n, MSG_NOSIGNAL);
        }
        if (k <= 0)
            return; /* the worker hung up (e.g. a size cap): fine */
        buf += k;
        n -= (size_t)k;
    }
}

static void *serve(void *arg)
{
    test_origin *o = arg;
    conn c = { .fd = o->pair_fd, .ssl = NULL };
    if (!o->use_pair) {
        struct pollfd p = { .fd = o->listen_fd, .events = POLLIN };
        if (poll(&p, 1, ORIGIN_WAIT_MS) != 1)
            return NULL;
        c.fd = accept4(o->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (c.fd < 0)
            return NULL;
    }
    o->accepted++;
    struct timeval tv = { .tv_sec = ORIGIN_WAIT_MS / 1000 };
    setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    SSL_CTX *ctx = NULL;
    if (o->cert_file && o->key_file) {
        ctx = SSL_CTX_new(TLS_server_method());
        if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, o->cert_file) != 1 ||
            SSL_CTX_use_PrivateKey_file(ctx, o->key_file, SSL_FILETYPE_PEM) != 1)
            goto out;
        c.ssl = SSL_new(ctx);
        SSL_set_fd(c.ssl, c.fd);
        if (SSL_accept(c.ssl) != 1)
            goto out;
        o->tls_handshake_ok = true;
    }
    while (o->request_len < ORIGIN_MAX_REQUEST) {
        ssize_t k = conn_read(&c, o->request + o->request_len,
                              ORIGIN_MAX_REQUEST - o->request_len);
        if (k <= 0)
            break;
        o->request_len += (size_t)k;
        o->request[o->request_len] = '\0';
        if (strstr(o->request, "\r\n\r\n"))
            break;
    }
    if (o->response) {
        conn_write(&c, o->response, o->response_len);
    } else {
        char sink[256];
        while (conn_read(&c, sink, sizeof sink) > 0)
            ; /* say nothing until the worker gives up */
    }
    if (c.ssl)
        SSL_shutdown(c.ssl);
out:
    if (c.ssl)
        SSL_free(c.ssl);
    if (ctx)
        SSL_CTX_free(ctx);
    ERR_clear_error();
    close(c.fd);
    return NULL;
}

void origin_start(test_origin *o)
{
    signal(SIGPIPE, SIG_IGN);
    o->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert(o->listen_fd >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    cr_assert_eq(bind(o->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(o->listen_fd, 4), 0);
    socklen_t alen = sizeof a;
    cr_assert_eq(getsockname(o->listen_fd, (struct sockaddr *)&a, &alen), 0);
    o->port = ntohs(a.sin_port);
    cr_assert_eq(pthread_create(&o->thread, NULL, serve, o), 0);
}

int origin_start_pair(test_origin *o)
{
    signal(SIGPIPE, SIG_IGN);
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    o->use_pair = true;
    o->pair_fd = sv[0];
    o->listen_fd = -1;
    cr_assert_eq(pthread_create(&o->thread, NULL, serve, o), 0);
    return sv[1];
}

void origin_stop(test_origin *o)
{
    pthread_join(o->thread, NULL);
    if (o->listen_fd >= 0)
        close(o->listen_fd);
}

int origin_connect(const test_origin *o)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert(s >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(o->port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    cr_assert_eq(connect(s, (struct sockaddr *)&a, sizeof a), 0, "connect: %s", strerror(errno));
    return s;
}

/* ---- certificates ----------------------------------------------------- */

static void sh(const char *cmd)
{
    int rc = system(cmd);
    cr_assert_eq(rc, 0, "command failed (%d): %s", rc, cmd);
}

void pki_create(test_pki *p)
{
    snprintf(p->dir, sizeof p->dir, "/tmp/vf-worker-pki-XXXXXX");
    cr_assert(mkdtemp(p->dir) != NULL);
    snprintf(p->ca_pem, sizeof p->ca_pem, "%s/ca.pem", p->dir);
    snprintf(p->cert_pem, sizeof p->cert_pem, "%s/server.pem", p->dir);
    snprintf(p->key_pem, sizeof p->key_pem, "%s/server.key", p->dir);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && "
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout ca.key -out ca.pem -days 2 -subj /CN=verifetch-test-ca "
             "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign,cRLSign "
             ">/dev/null 2>&1 && "
             "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout server.key -out server.csr -subj /CN=localhost >/dev/null 2>&1 && "
             "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\n' "
             "> ext.cnf && "
             "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
             "-out server.pem -days 2 -extfile ext.cnf >/dev/null 2>&1",
             p->dir);
    sh(cmd);
}

void pki_destroy(test_pki *p)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", p->dir);
    sh(cmd);
}

uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "open %s", path);
    uint8_t *buf = malloc(1 << 20);
    cr_assert(buf != NULL);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

/* ---- running a worker ------------------------------------------------- */

const char *worker_path(const char *name)
{
    static char path[4096];
    const char *root = getenv("VERIFETCH_BUILD_ROOT");
    cr_assert(root != NULL, "VERIFETCH_BUILD_ROOT is not set (run through meson test)");
    snprintf(path, sizeof path, "%s/worker/%s", root, name);
    return path;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pid_t spawn_worker(const char *exe, int *ipc)
{
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    /* Keep both ends clear of 0..3 so the dup2 to fd 3 is a real copy. */
    int child_end = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    int parent_end = fcntl(sv[0], F_DUPFD_CLOEXEC, 10);
    close(sv[0]);
    close(sv[1]);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, child_end, 3);
    char *argv[] = { "verifetch-worker", NULL };
    char *envp[] = { NULL };
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "posix_spawn %s: %s", exe, strerror(rc));
    close(child_end);
    *ipc = parent_end;
    return pid;
}

static void send_job(int ipc, const vf_job *job, int pass_fd)
{
    void *buf;
    size_t len;
    cr_assert_eq(vf_job_encode(job, &buf, &len), VF_IPC_OK);
    cr_assert_eq(vf_ipc_send_frame(ipc, buf, len, pass_fd), VF_IPC_OK);
    free(buf);
    if (pass_fd >= 0)
        close(pass_fd); /* the worker holds the only copy now */
}

static void read_result(int ipc, const vf_job *job, int64_t deadline, worker_run *out)
{
    void *payload = NULL;
    size_t len = 0;
    out->recv_err = vf_ipc_recv_frame(ipc, (size_t)job->max_body + VF_IPC_RESULT_OVERHEAD,
                                      deadline, &payload, &len, NULL);
    out->decode_err = VF_IPC_ERR_EOF;
    if (out->recv_err == VF_IPC_OK) {
        out->got_frame = true;
        out->decode_err = vf_result_decode(payload, len, (size_t)job->max_body, &out->res, NULL);
    }
    free(payload);
}

static int wait_exit(pid_t pid, int64_t deadline)
{
    int st = 0;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (now_ms() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return st;
        }
        usleep(2000);
    }
}

void run_worker_keep_alive(const char *exe, const vf_job *job, int pass_fd, int wait_ms,
                           worker_run *out)
{
    memset(out, 0, sizeof *out);
    int64_t deadline = now_ms() + wait_ms;
    out->pid = spawn_worker(exe, &out->ipc);
    send_job(out->ipc, job, pass_fd);
    read_result(out->ipc, job, deadline, out);
}

void run_worker(const char *exe, const vf_job *job, int pass_fd, int wait_ms, worker_run *out)
{
    int64_t deadline = now_ms() + wait_ms;
    run_worker_keep_alive(exe, job, pass_fd, wait_ms, out);
    out->wstatus = wait_exit(out->pid, deadline);
    char extra;
    out->extra_bytes = recv(out->ipc, &extra, 1, MSG_DONTWAIT) > 0;
    close(out->ipc);
    out->ipc = -1;
}

void worker_run_free(worker_run *r)
{
    if (r->decode_err == VF_IPC_OK)
        vf_result_free(&r->res);
}

vf_job basic_job(char *url)
{
    vf_job job = { .url = url, .connect_ip = "127.0.0.1", .timeout_ms = 5000,
                   .max_body = 1 << 20, .mode = VF_MODE_RAW };
    char *p = strrchr(url, ':');
    job.port = p ? (uint16_t)atoi(p + 1) : 80;
    return job;
}

char *http_response(const char *status_line, const char *headers, const char *body,
                    size_t body_len, size_t *out_len)
{
    size_t cap = strlen(status_line) + strlen(headers) + body_len + 128;
    char *r = malloc(cap);
    cr_assert(r != NULL);
    int n = snprintf(r, cap, "%s\r\n%s%sContent-Length: %zu\r\nConnection: close\r\n\r\n",
                     status_line, headers, headers[0] ? "\r\n" : "", body_len);
    cr_assert(n > 0 && (size_t)n + body_len < cap);
    memcpy(r + n, body, body_len);
    *out_len = (size_t)n + body_len;
    return r;
}

void fetch_page(const char *ctype_header, const char *body, size_t body_len, uint32_t render,
                worker_run *r)
{
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", ctype_header, body, body_len, &len);
    test_origin o;
    memset(&o, 0, sizeof o);
    o.response = resp;
    o.response_len = len;
    origin_start(&o);
    char url[128];
    snprintf(url, sizeof url, "http://origin.test:%u/docs/page.html", o.port);
    vf_job job = basic_job(url);
    job.port = o.port;
    job.render = render;
    run_worker(worker_path("verifetch-worker"), &job, origin_connect(&o), FETCH_PAGE_WAIT_MS, r);
    origin_stop(&o);
    free(resp);
    cr_assert(WIFEXITED(r->wstatus) && WEXITSTATUS(r->wstatus) == 0, "worker status %#x",
              r->wstatus);
    cr_assert_eq(r->decode_err, VF_IPC_OK, "%s", vf_ipc_strerror(r->decode_err));
    cr_assert_null(r->res.transport_error, "%s", r->res.detail);
}

char *html_text_of(const char *body, uint32_t render, worker_run *r)
{
    fetch_page("Content-Type: text/html; charset=utf-8", body, strlen(body), render, r);
    return (char *)r->res.text;
}
