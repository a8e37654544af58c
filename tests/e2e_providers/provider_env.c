#include "provider_env.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#define PE_MAX_ORIGINS 8
#define PE_ORIGIN_START_MS 10000

/* Write ends of our origins' stdin: closing them makes the origins exit.
 * hx_teardown also kills every child of the test process, ours included. */
static int origin_stdin[PE_MAX_ORIGINS];
static size_t n_origins;
static unsigned origin_seq;

void pe_setup(void)
{
    hx_setup();
    n_origins = 0;
    origin_seq = 0;
}

void pe_teardown(void)
{
    for (size_t i = 0; i < n_origins; i++)
        close(origin_stdin[i]);
    n_origins = 0;
    hx_teardown();
}

__attribute__((format(printf, 3, 4)))
static void fmt(char *buf, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(buf, len, f, ap);
    va_end(ap);
    cr_assert(n > 0 && (size_t)n < len, "string too long for its buffer: %s", buf);
}

static int read_port(int fd)
{
    char line[64];
    size_t n = 0;
    double deadline = hx_now_ms() + PE_ORIGIN_START_MS;
    while (n < sizeof line - 1) {
        int left = (int)(deadline - hx_now_ms());
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return -1;
        if (read(fd, line + n, 1) != 1)
            return -1;
        if (line[n] == '\n')
            break;
        n++;
    }
    line[n] = '\0';
    int port = -1;
    return sscanf(line, "PORT %d", &port) == 1 && port > 0 && port < 65536 ? port : -1;
}

void pe_origin_start(pe_origin *o, const hx_ca *tls, unsigned flags)
{
    cr_assert_lt(n_origins, PE_MAX_ORIGINS, "too many origins in one test");
    const char *src = getenv("VERIFETCH_SOURCE_ROOT");
    cr_assert_not_null(src, "VERIFETCH_SOURCE_ROOT is not set (run through meson test)");
    char script[PATH_MAX], err_path[PATH_MAX];
    fmt(script, sizeof script, "%s/tests/e2e_providers/provider_origin.py", src);
    unsigned seq = origin_seq++;
    memset(o, 0, sizeof *o);
    fmt(o->log_path, sizeof o->log_path, "%s/provider-origin%u.log", hx_tmpdir(), seq);
    fmt(err_path, sizeof err_path, "%s/provider-origin%u.err", hx_tmpdir(), seq);
    const char *python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";

    int in[2], out[2];
    cr_assert(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(err >= 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);   /* never outlive a crashed test */
        if (getppid() != parent || dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err, 2) < 0)
            _exit(127);
        closefrom(3);
        char *argv[10];
        size_t a = 0;
        argv[a++] = (char *)python;
        argv[a++] = script;
        argv[a++] = "--log";
        argv[a++] = o->log_path;
        if (tls) {
            argv[a++] = "--tls";
            argv[a++] = (char *)tls->cert_pem;
            argv[a++] = (char *)tls->key_pem;
            if (flags & PE_NO_CLOSE_NOTIFY)
                argv[a++] = "--no-close-notify";
        }
        argv[a] = NULL;
        execvp(python, argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err);
    origin_stdin[n_origins++] = in[1];
    o->pid = pid;
    o->port = read_port(out[0]);
    close(out[0]);
    char *errs = hx_read_file(err_path, NULL);
    cr_assert_gt(o->port, 0, "provider_origin.py did not report its port: %s", errs ? errs : "");
    free(errs);
}

char *pe_origin_log(const pe_origin *o)
{
    char *log = hx_read_file(o->log_path, NULL);
    return log ? log : strdup("");
}

void pe_canary_make(char *out, size_t len)
{
    unsigned char rnd[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    cr_assert(fd >= 0 && read(fd, rnd, sizeof rnd) == (ssize_t)sizeof rnd);
    close(fd);
    char hex[33];
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
    /* '+', '/', '=' and '!' all change under percent-encoding. */
    int n = snprintf(out, len, "vfcanary-%s+/=!", hex);
    cr_assert(n > 0 && (size_t)n < len);
}

void pe_key_file(const char *name, const char *key, char *path, size_t len)
{
    fmt(path, len, "%s/%s", hx_tmpdir(), name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
    cr_assert(fchmod(fd, 0600) == 0);   /* whatever the umask */
    size_t kl = strlen(key);
    cr_assert(write(fd, key, kl) == (ssize_t)kl && write(fd, "\n", 1) == 1);
    close(fd);
}

const char *pe_random_key_file(const char *name, char *path, size_t len)
{
    char key[96];
    pe_canary_make(key, sizeof key);
    pe_key_file(name, key, path, len);
    return path;
}

/* ---- encoded forms --------------------------------------------------------- */

static char *percent(const char *s, const char *hex)
{
    size_t n = strlen(s);
    char *out = malloc(3 * n + 1);
    cr_assert_not_null(out);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
        if (unreserved) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

/* Written here rather than borrowed from the broker, so a shared bug cannot hide a leak. */
static char *base64(const char *s, const char *alphabet, bool pad)
{
    const unsigned char *in = (const unsigned char *)s;
    size_t n = strlen(s);
    char *out = malloc(4 * (n / 3 + 1) + 1);
    cr_assert_not_null(out);
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = alphabet[(v >> 18) & 63];
        out[o++] = alphabet[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = alphabet[(v >> 6) & 63];
        else if (pad)
            out[o++] = '=';
        if (i + 2 < n)
            out[o++] = alphabet[v & 63];
        else if (pad)
            out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}

static void add_form(pe_forms *f, const char *name, char *value)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->form[i], value) == 0) {
            free(value);
            return;
        }
    cr_assert_lt(f->n, PE_MAX_FORMS);
    f->form[f->n] = value;
    f->name[f->n] = name;
    f->len[f->n] = strlen(value);
    f->n++;
}

static const char std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *pe_base64(const char *s)
{
    return base64(s, std, true);
}

char *pe_basic_header(const char *key)
{
    char *pair = NULL, *line = NULL;
    cr_assert(asprintf(&pair, "%s:", key) > 0);
    char *b64 = pe_base64(pair);
    cr_assert(asprintf(&line, "HDR Authorization: Basic %s\n", b64) > 0);
    free(b64);
    free(pair);
    return line;
}

void pe_forms_build(const char *secret, pe_forms *f)
{
    static const char url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    memset(f, 0, sizeof *f);
    add_form(f, "raw", strdup(secret));
    add_form(f, "percent-encoded", percent(secret, "0123456789ABCDEF"));
    add_form(f, "percent-encoded (lower hex)", percent(secret, "0123456789abcdef"));
    add_form(f, "base64", base64(secret, std, true));
    add_form(f, "base64 (unpadded)", base64(secret, std, false));
    add_form(f, "base64url", base64(secret, url, true));
    add_form(f, "base64url (unpadded)", base64(secret, url, false));
}

void pe_forms_free(pe_forms *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->form[i]);
    memset(f, 0, sizeof *f);
}

const char *pe_forms_find(const pe_forms *f, const char *hay, size_t len)
{
    for (size_t i = 0; hay && i < f->n; i++)
        if (memmem(hay, len, f->form[i], f->len[i]))
            return f->name[i];
    return NULL;
}

char *pe_http_api_provider(const char *name, const char *endpoint, const char *extra)
{
    char key_name[64], key_path[PATH_MAX];
    fmt(key_name, sizeof key_name, "%s.key", name);
    pe_random_key_file(key_name, key_path, sizeof key_path);
    char *out = NULL;
    int n = asprintf(&out,
                     "{ name = \"%s\"; kind = \"http_api\"; endpoint = \"%s?url={url}\";\n"
                     "  credential = { header = \"X-Api-Key\"; key_file = \"%s\"; }; %s }",
                     name, endpoint, key_path, extra ? extra : "");
    cr_assert(n > 0);
    return out;
}

char *pe_provider_list(const char *a, const char *b, const char *c, const char *d)
{
    const char *parts[] = { a, b, c, d };
    char *out = strdup("");
    cr_assert_not_null(out);
    for (size_t i = 0; i < 4; i++) {
        if (!parts[i])
            continue;
        char *joined = NULL;
        cr_assert(asprintf(&joined, "%s%s%s", out, out[0] ? ",\n" : "", parts[i]) > 0);
        free(out);
        out = joined;
    }
    return out;
}

hx_response pe_lookup(const hx_broker *b, const char *url, const char *extra)
{
    hx_response r = hx_lookup(b, "{\"url\": \"%s\"%s}", url, extra ? extra : "");
    cr_assert_eq(r.status, 200, "lookup HTTP %ld (curl %d): %s\nbroker stderr: %s", r.status,
                 r.curl_code, r.body, hx_broker_log(b));
    return r;
}
