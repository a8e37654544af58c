/* E2E harness core: per-test temp dir and teardown, the throw-away test CA
 * (openssl CLI) and loopback origin servers (tests/origin/origin.py). */
#include "harness_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <curl/curl.h>

#define HX_MAX_PIPES 16

static char tmpdir[PATH_MAX];
static int held_fds[HX_MAX_PIPES];   /* origin stdin write ends: closing them stops the origins */
static size_t n_held;
static hx_ca default_ca;
static bool default_ca_ready;
static unsigned origin_seq;

void hx_setup(void)
{
    /* Orphans of anything we start (e.g. a worker whose broker was killed) re-parent to us. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    hx_fmt(tmpdir, sizeof tmpdir, "/tmp/vf-e2e-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp: %s", strerror(errno));
    default_ca_ready = false;
    origin_seq = 0;
    n_held = 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void hx_teardown(void)
{
    hx_reap_all();
    for (size_t i = 0; i < n_held; i++)
        close(held_fds[i]);
    n_held = 0;
    if (tmpdir[0] && getenv("VERIFETCH_E2E_KEEP") == NULL)
        nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    tmpdir[0] = '\0';
    curl_global_cleanup();
}

const char *hx_tmpdir(void)
{
    cr_assert(tmpdir[0], "hx_setup() was not run (use .init = hx_setup)");
    return tmpdir;
}

static const char *root_path(const char *var, const char *rel, char *buf, size_t len)
{
    const char *root = getenv(var);
    cr_assert_not_null(root, "%s is not set (run through meson test)", var);
    hx_fmt(buf, len, "%s/%s", root, rel);
    return buf;
}

const char *hx_build_path(const char *rel, char *buf, size_t len)
{
    return root_path("VERIFETCH_BUILD_ROOT", rel, buf, len);
}

/* ---- test CA ------------------------------------------------------------- */

static void run_openssl(char *const argv[], const char *log)
{
    int st = hx_run(argv, log, log, 10000);
    char *out = hx_read_file(log, NULL);
    cr_assert(st == 0, "openssl %s failed (status %d): %s", argv[1], st, out ? out : "");
    free(out);
}

void hx_ca_generate(const char *name, hx_ca *out)
{
    char dir[PATH_MAX], ca_key[PATH_MAX], csr[PATH_MAX], ext[PATH_MAX], log[PATH_MAX];
    hx_fmt(dir, sizeof dir, "%s/%s", hx_tmpdir(), name);
    cr_assert(mkdir(dir, 0700) == 0, "mkdir %s: %s", dir, strerror(errno));
    hx_fmt(ca_key, sizeof ca_key, "%s/ca.key", dir);
    hx_fmt(csr, sizeof csr, "%s/server.csr", dir);
    hx_fmt(ext, sizeof ext, "%s/server.ext", dir);
    hx_fmt(log, sizeof log, "%s/openssl.log", dir);
    hx_fmt(out->ca_pem, sizeof out->ca_pem, "%s/ca.pem", dir);
    hx_fmt(out->cert_pem, sizeof out->cert_pem, "%s/server.pem", dir);
    hx_fmt(out->key_pem, sizeof out->key_pem, "%s/server.key", dir);

    FILE *f = fopen(ext, "we");
    cr_assert_not_null(f);
    fputs("basicConstraints=critical,CA:FALSE\n"
          "keyUsage=critical,digitalSignature\n"
          "extendedKeyUsage=serverAuth\n"
          "subjectAltName=IP:127.0.0.1,DNS:localhost\n", f);
    fclose(f);

    char subj[128];
    hx_fmt(subj, sizeof subj, "/CN=verifetch e2e test CA %s", name);
    char *ca[] = { "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                   "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", ca_key,
                   "-out", out->ca_pem, "-days", "2", "-subj", subj,
                   "-addext", "basicConstraints=critical,CA:TRUE",
                   "-addext", "keyUsage=critical,keyCertSign,cRLSign", NULL };
    run_openssl(ca, log);
    char *req[] = { "openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", out->key_pem,
                    "-out", csr, "-subj", "/CN=127.0.0.1", NULL };
    run_openssl(req, log);
    char serial[32];
    hx_fmt(serial, sizeof serial, "%ld", (long)getpid() * 1000 + (long)(hx_now_ms()) % 1000);
    char *sign[] = { "openssl", "x509", "-req", "-in", csr, "-CA", out->ca_pem,
                     "-CAkey", ca_key, "-set_serial", serial, "-days", "2",
                     "-out", out->cert_pem, "-extfile", ext, NULL };
    run_openssl(sign, log);
}

const hx_ca *hx_default_ca(void)
{
    if (!default_ca_ready) {
        hx_ca_generate("ca", &default_ca);
        default_ca_ready = true;
    }
    return &default_ca;
}

/* ---- origin servers ------------------------------------------------------ */

static int read_port_line(int fd, unsigned timeout_ms)
{
    char line[64];
    size_t n = 0;
    double deadline = hx_now_ms() + timeout_ms;
    while (n < sizeof line - 1) {
        int left = (int)(deadline - hx_now_ms());
        if (left <= 0)
            return -1;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, left) <= 0)
            continue;
        ssize_t got = read(fd, line + n, 1);
        if (got <= 0)
            return -1;
        if (line[n] == '\n')
            break;
        n++;
    }
    line[n] = '\0';
    int port = -1;
    if (sscanf(line, "PORT %d", &port) != 1 || port <= 0 || port > 65535)
        return -1;
    return port;
}

void hx_origin_start(hx_origin *o, const char *bind, const hx_ca *tls)
{
    char script[PATH_MAX], err_path[PATH_MAX];
    root_path("VERIFETCH_SOURCE_ROOT", "tests/origin/origin.py", script, sizeof script);
    unsigned seq = origin_seq++;
    memset(o, 0, sizeof *o);
    hx_fmt(o->bind, sizeof o->bind, "%s", bind ? bind : "127.0.0.1");
    hx_fmt(o->log_path, sizeof o->log_path, "%s/origin%u.log", hx_tmpdir(), seq);
    hx_fmt(err_path, sizeof err_path, "%s/origin%u.err", hx_tmpdir(), seq);

    int in[2], out[2];
    cr_assert(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(err >= 0);
    /* The system interpreter starts ~10x faster than a pyenv shim; stdlib is enough. */
    const char *python = getenv("VERIFETCH_E2E_PYTHON");
    if (!python)
        python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    char owner[PATH_MAX];
    hx_build_path("", owner, sizeof owner);
    char *argv[20];
    size_t a = 0;
    argv[a++] = (char *)python;
    argv[a++] = script;
    argv[a++] = "--port";
    argv[a++] = "0";
    argv[a++] = "--bind";
    argv[a++] = o->bind;
    argv[a++] = "--log";
    argv[a++] = o->log_path;
    argv[a++] = "--max-lifetime";
    argv[a++] = "120";
    argv[a++] = "--owner";
    argv[a++] = owner;
    if (tls) {
        argv[a++] = "--tls";
        argv[a++] = (char *)tls->cert_pem;
        argv[a++] = (char *)tls->key_pem;
    }
    argv[a] = NULL;
    o->pid = hx_spawn(argv, in[0], out[1], err, SIGKILL);
    close(in[0]);
    close(out[1]);
    close(err);
    cr_assert(o->pid > 0, "cannot spawn origin.py");
    if (n_held < HX_MAX_PIPES)
        held_fds[n_held++] = in[1];
    o->port = read_port_line(out[0], 10000);
    close(out[0]);
    char *errs = hx_read_file(err_path, NULL);
    cr_assert(o->port > 0, "origin.py did not report its port: %s", errs ? errs : "");
    free(errs);
}

int hx_origin_connections(const hx_origin *o)
{
    char *log = hx_read_file(o->log_path, NULL);
    int n = 0;
    for (const char *p = log; p && (p = strstr(p, "CONNECT ")) != NULL; p += 8)
        n++;
    free(log);
    return n;
}

const char *hx_origin_url(const hx_origin *o, bool tls, const char *path, char *buf, size_t len)
{
    hx_fmt(buf, len, "%s://%s:%d%s", tls ? "https" : "http", o->bind, o->port, path);
    return buf;
}

int hx_closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert(fd >= 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    cr_assert(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    cr_assert(getsockname(fd, (struct sockaddr *)&sa, &sl) == 0);
    close(fd);
    return ntohs(sa.sin_port);
}
