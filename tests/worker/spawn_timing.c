/* Spawn-path timing (issue 6 item 3): what one hop through a confined worker
 * adds to a fetch. Against one loopback origin serving a 10 KiB page (plain
 * HTTP, and TLS with the distribution CA bundle plus a throwaway CA, as a
 * deployment trusts), it times
 *   inproc  a fresh libcurl easy handle per fetch, in this process: the floor;
 *   exec    the broker's vf_worker_run() with posix_spawn + exec per worker;
 *   zygote  the same call with the zygote running (fork of a warm process);
 *   curl    one /usr/bin/curl process per fetch (throughput only);
 * at concurrency 1 (median, p90, p99 latency) and 16 (fetches/s).
 *
 * Usage: spawn_timing [-n N] [--worker PATH] [--skip-zygote] [--http-only] [--private-ns]
 *        (or meson test --benchmark --suite worker)
 * Needs the openssl CLI. Loopback only; every fetch is checked. */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/spawn/worker_run.h"
#include "broker/spawn/zygote_client.h"
#include "ipc/ipc_frame.h"

#define PAGE_BYTES 10240
#define THREADS 16
#define SYSTEM_CA "/etc/ssl/certs/ca-certificates.crt"

extern char **environ;

typedef struct {
    int listen_fd;
    uint16_t port;
    SSL_CTX *tls;          /* NULL: plain HTTP */
    char *response;
    size_t response_len;
} origin;

typedef struct {
    const char *name;
    origin *o;
    bool tls;
    const char *worker;
    const char *ca_file;   /* inproc/curl */
    uint8_t *ca;           /* worker jobs */
    size_t ca_len;
} target;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void die(const char *what)
{
    fprintf(stderr, "spawn_timing: %s\n", what);
    exit(1);
}

/* ---- origin: one thread per connection, Connection: close --------------- */

typedef struct {
    origin *o;
    int fd;
} conn_arg;

static void *serve_conn(void *arg)
{
    conn_arg *c = arg;
    SSL *ssl = NULL;
    char buf[4096];
    size_t got = 0;
    if (c->o->tls) {
        ssl = SSL_new(c->o->tls);
        SSL_set_fd(ssl, c->fd);
        if (SSL_accept(ssl) != 1)
            goto out;
    }
    while (got < sizeof buf - 1) {
        int k = ssl ? SSL_read(ssl, buf + got, (int)(sizeof buf - 1 - got))
                    : (int)recv(c->fd, buf + got, sizeof buf - 1 - got, 0);
        if (k <= 0)
            goto out;
        got += (size_t)k;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            break;
    }
    if (ssl)
        SSL_write(ssl, c->o->response, (int)c->o->response_len);
    else
        send(c->fd, c->o->response, c->o->response_len, MSG_NOSIGNAL);
out:
    if (ssl) {
        SSL_shutdown(ssl);
        SSL_free(ssl);
    }
    ERR_clear_error();
    close(c->fd);
    free(c);
    return NULL;
}

static void *accept_loop(void *arg)
{
    origin *o = arg;
    for (;;) {
        int fd = accept4(o->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        conn_arg *c = malloc(sizeof *c);
        pthread_t t;
        c->o = o;
        c->fd = fd;
        if (pthread_create(&t, NULL, serve_conn, c) == 0)
            pthread_detach(t);
    }
    return NULL;
}

static void origin_start(origin *o, SSL_CTX *tls)
{
    o->tls = tls;
    o->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    if (o->listen_fd < 0 || bind(o->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(o->listen_fd, 256) != 0 || getsockname(o->listen_fd, (struct sockaddr *)&a, &alen) != 0)
        die("origin socket");
    o->port = ntohs(a.sin_port);
    static const char para[] = "<p>verifetch timing paragraph.</p>\n";
    char body[PAGE_BYTES + 1];
    for (size_t i = 0; i < PAGE_BYTES; i++)
        body[i] = para[i % (sizeof para - 1)];
    body[PAGE_BYTES] = '\0';
    o->response = malloc(PAGE_BYTES + 256);
    o->response_len = (size_t)snprintf(o->response, PAGE_BYTES + 256,
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
        PAGE_BYTES, body);
    pthread_t t;
    if (pthread_create(&t, NULL, accept_loop, o) != 0)
        die("origin thread");
    pthread_detach(t);
}

static int connect_origin(const origin *o)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(o->port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0)
        die("connect to origin");
    return s;
}

/* ---- the three ways of fetching ----------------------------------------- */

static size_t count(char *p, size_t size, size_t n, void *u)
{
    (void)p;
    *(size_t *)u += size * n;
    return size * n;
}

static void url_of(const target *t, char *url, size_t len)
{
    snprintf(url, len, "%s://%s:%u/page", t->tls ? "https" : "http",
             t->tls ? "localhost" : "127.0.0.1", t->o->port);
}

static bool fetch_inproc(const target *t)
{
    char url[128];
    url_of(t, url, sizeof url);
    CURL *h = curl_easy_init();
    size_t got = 0;
    struct curl_slist *resolve = NULL;
    char entry[96];
    snprintf(entry, sizeof entry, "localhost:%u:127.0.0.1", t->o->port);
    resolve = curl_slist_append(NULL, entry);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_RESOLVE, resolve);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, count);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
    if (t->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, t->ca_file);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_cleanup(h);
    curl_slist_free_all(resolve);
    return rc == CURLE_OK && got == PAGE_BYTES;
}

static bool fetch_worker(const target *t)
{
    char url[128];
    url_of(t, url, sizeof url);
    int s = connect_origin(t->o);
    vf_job job = { .url = url, .connect_ip = "127.0.0.1", .port = t->o->port, .timeout_ms = 10000,
                   .max_body = 1 << 20, .mode = VF_MODE_RAW,
                   .ca_pem = t->tls ? t->ca : NULL, .ca_pem_len = t->tls ? t->ca_len : 0 };
    vf_worker_spec spec = { .path = t->worker };
    vf_result res;
    char detail[256];
    int rc = vf_worker_run(&spec, &job, s, vf_now_ms() + 10000, &res, detail, sizeof detail);
    close(s);
    if (rc != 0) {
        fprintf(stderr, "worker: %s\n", detail);
        return false;
    }
    bool ok = !res.transport_error && res.http_status == 200 && res.body_bytes == PAGE_BYTES &&
              res.text_len > 1000;
    if (!ok)
        fprintf(stderr, "worker: %s %s\n", res.transport_error ? res.transport_error : "",
                res.detail ? res.detail : "");
    vf_result_free(&res);
    return ok;
}

static bool fetch_curl_process(const target *t)
{
    char url[128], resolve[96];
    url_of(t, url, sizeof url);
    snprintf(resolve, sizeof resolve, "localhost:%u:127.0.0.1", t->o->port);
    char *argv[] = { "curl", "-q", "-s", "-f", "--noproxy", "*", "-o", "/dev/null", "--resolve",
                     resolve, t->ca_file ? "--cacert" : url, (char *)t->ca_file, url, NULL };
    if (!t->ca_file)
        argv[11] = NULL;
    pid_t pid;
    if (posix_spawn(&pid, "/usr/bin/curl", NULL, NULL, argv, environ) != 0)
        return false;
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* ---- timing ------------------------------------------------------------- */

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef bool (*fetch_fn)(const target *);

/* CPU of everything a fetch makes run, in ms: this process (client, origin,
 * the broker's side), children it reaped (exec'd workers, curl), and the
 * zygote with the workers it reaped. Immune to what else the machine does. */
static double cpu_ms(void)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    double ms = (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
                         kids.ru_stime.tv_sec) * 1e3 +
                (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
                         kids.ru_stime.tv_usec) / 1e3;
    vf_zygote_status st;
    vf_zygote_get_status(&st);
    if (st.running) {
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)st.pid);
        FILE *f = fopen(path, "re");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        unsigned long long ut = 0, stime = 0;
        long long cut = 0, cst = 0;
        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld",
                        &ut, &stime, &cut, &cst) == 4)
            ms += (double)(ut + stime + (unsigned long long)cut + (unsigned long long)cst) * 1e3 /
                  (double)sysconf(_SC_CLK_TCK);
    }
    return ms;
}

static double latency(const char *mode, fetch_fn f, const target *t, int n)
{
    double *v = malloc(sizeof *v * (size_t)n);
    for (int i = 0; i < 5; i++)
        if (!f(t))
            die("warm-up fetch failed");
    double cpu0 = cpu_ms();
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        if (!f(t))
            die("fetch failed");
        v[i] = now_ms() - t0;
    }
    usleep(100000); /* the last workers are reaped and counted */
    double cpu = (cpu_ms() - cpu0) / n;
    qsort(v, (size_t)n, sizeof *v, cmp);
    double med = v[n / 2];
    printf("  %-5s %-7s c=1   median %7.3f ms  p90 %7.3f  p99 %7.3f   cpu/fetch %6.3f ms\n", t->name,
           mode, med, v[n * 9 / 10], v[n * 99 / 100], cpu);
    free(v);
    return med;
}

/* Floor and zygote fetch back to back, n times: the median of the per-pair
 * differences is the added latency least disturbed by whatever else the
 * machine is doing at the moment. */
static double paired(const target *t, int n)
{
    double *d = malloc(sizeof *d * (size_t)n);
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        if (!fetch_inproc(t))
            die("fetch failed");
        double t1 = now_ms();
        if (!fetch_worker(t))
            die("fetch failed");
        d[i] = (now_ms() - t1) - (t1 - t0);
    }
    qsort(d, (size_t)n, sizeof *d, cmp);
    double med = d[n / 2];
    printf("  %-5s zygote - inproc, paired per fetch: median %+.3f ms  p90 %+.3f\n", t->name, med,
           d[n * 9 / 10]);
    free(d);
    return med;
}

typedef struct {
    fetch_fn f;
    const target *t;
    int n;
    bool ok;
} job_arg;

static void *run_many(void *arg)
{
    job_arg *j = arg;
    j->ok = true;
    for (int i = 0; i < j->n; i++)
        j->ok = j->f(j->t) && j->ok;
    return NULL;
}

static double throughput(const char *mode, fetch_fn f, const target *t, int per_thread)
{
    pthread_t th[THREADS];
    job_arg a[THREADS];
    double t0 = now_ms();
    for (int i = 0; i < THREADS; i++) {
        a[i] = (job_arg){ .f = f, .t = t, .n = per_thread };
        pthread_create(&th[i], NULL, run_many, &a[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        if (!a[i].ok)
            die("concurrent fetch failed");
    }
    double rate = THREADS * per_thread / ((now_ms() - t0) / 1e3);
    printf("  %-5s %-7s c=%d  %7.0f fetches/s\n", t->name, mode, THREADS, rate);
    return rate;
}

/* ---- set-up ------------------------------------------------------------- */

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 22;
    uint8_t *b = malloc(cap);
    *len = fread(b, 1, cap, f);
    fclose(f);
    return b;
}

/* Throwaway CA and a localhost certificate; ca.pem is then extended with the
 * system bundle so every mode trusts what a deployment would. */
static SSL_CTX *make_tls(char *dir, size_t dirlen)
{
    snprintf(dir, dirlen, "/tmp/vf-spawn-timing-XXXXXX");
    if (!mkdtemp(dir))
        die("mkdtemp");
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout ca.key -out ca.pem -days 2 -subj /CN=vf-timing-ca "
             "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign >/dev/null 2>&1 && "
             "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout srv.key "
             "-out srv.csr -subj /CN=localhost >/dev/null 2>&1 && "
             "printf 'subjectAltName=DNS:localhost\\n' > ext.cnf && "
             "openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem "
             "-days 2 -extfile ext.cnf >/dev/null 2>&1 && "
             "{ cat %s 2>/dev/null; cat ca.pem; } > bundle.pem", dir, SYSTEM_CA);
    if (system(cmd) != 0)
        die("openssl CLI failed");
    char cert[128], key[128];
    snprintf(cert, sizeof cert, "%s/srv.pem", dir);
    snprintf(key, sizeof key, "%s/srv.key", dir);
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_use_certificate_file(ctx, cert, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
        die("server certificate");
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    return ctx;
}

static const char *default_worker(void)
{
    static char path[4096];
    const char *root = getenv("VERIFETCH_BUILD_ROOT");
    snprintf(path, sizeof path, "%s/worker/verifetch-worker", root ? root : ".");
    return path;
}

static bool private_ns;

static void run_target(target *t, int n, bool skip_zygote)
{
    double floor_ms = latency("inproc", fetch_inproc, t, n);
    vf_zygote_stop();
    double exec_ms = latency("exec", fetch_worker, t, n);
    double zygote_ms = 0;
    if (!skip_zygote) {
        char err[256];
        vf_zygote_options zo = { .worker_path = t->worker, .ca_pem = t->ca, .ca_pem_len = t->ca_len,
                                 .pool = VF_ZYGOTE_DEFAULT_POOL, .private_namespaces = private_ns };
        if (vf_zygote_start(&zo, err, sizeof err) != 0)
            die(err);
        zygote_ms = latency("zygote", fetch_worker, t, n);
        paired(t, n);
    }
    printf("  %-5s added over inproc (median): exec %+.3f ms", t->name, exec_ms - floor_ms);
    if (!skip_zygote)
        printf(", zygote %+.3f ms", zygote_ms - floor_ms);
    printf("\n");
    int per = n / THREADS > 4 ? n / THREADS : 4;
    double curl_rate = throughput("curl", fetch_curl_process, t, per);
    double exec_rate = 0, zygote_rate = 0;
    if (!skip_zygote) {
        zygote_rate = throughput("zygote", fetch_worker, t, per);
        vf_zygote_stop();
    }
    exec_rate = throughput("exec", fetch_worker, t, per);
    printf("  %-5s throughput vs curl-per-fetch: exec %.2fx", t->name, exec_rate / curl_rate);
    if (!skip_zygote)
        printf(", zygote %.2fx", zygote_rate / curl_rate);
    printf("\n");
}

int main(int argc, char **argv)
{
    int n = 200;
    const char *worker = default_worker();
    bool skip_zygote = false, http_only = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--worker") == 0 && i + 1 < argc)
            worker = argv[++i];
        else if (strcmp(argv[i], "--skip-zygote") == 0)
            skip_zygote = true;
        else if (strcmp(argv[i], "--http-only") == 0)
            http_only = true;
        else if (strcmp(argv[i], "--private-ns") == 0)
            private_ns = true;
        else
            die("usage: spawn_timing [-n N] [--worker PATH] [--skip-zygote] [--http-only] [--private-ns]");
    }
    if (n < 20)
        n = 20;
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    char dir[64];
    SSL_CTX *tls = make_tls(dir, sizeof dir);
    char bundle[128];
    snprintf(bundle, sizeof bundle, "%s/bundle.pem", dir);
    size_t ca_len = 0;
    uint8_t *ca = read_all(bundle, &ca_len);
    if (!ca)
        die("bundle");
    origin plain = { 0 }, secure = { 0 };
    origin_start(&plain, NULL);
    origin_start(&secure, tls);
    printf("spawn_timing: %d fetches per cell, 10 KiB page, worker %s, CA bundle %zu bytes, %ld CPUs\n",
           n, worker, ca_len, sysconf(_SC_NPROCESSORS_ONLN));
    target http = { .name = "http", .o = &plain, .worker = worker };
    target https = { .name = "https", .o = &secure, .tls = true, .worker = worker,
                     .ca_file = bundle, .ca = ca, .ca_len = ca_len };
    run_target(&http, n, skip_zygote);
    if (!http_only)
        run_target(&https, n, skip_zygote);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "spawn_timing: could not remove %s\n", dir);
    free(ca);
    return 0;
}
