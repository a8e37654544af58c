/* Policy e2e support: clients for the broker (unix socket, TCP listener, and
 * a forked child under another uid) and readers for receipts and metrics. */
#include "pol.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <openssl/evp.h>

#define POL_MAX_RESPONSE   (4u << 20)
#define POL_REQUEST_MS     30000L
#define POL_CHILD_MS       20000

typedef struct {
    char *buf;
    size_t len;
} sink;

static size_t on_body(char *data, size_t size, size_t nmemb, void *user)
{
    sink *s = user;
    size_t n = size * nmemb;
    if (s->len + n > POL_MAX_RESPONSE)
        return 0;
    char *bigger = realloc(s->buf, s->len + n + 1);
    if (!bigger)
        return 0;
    memcpy(bigger + s->len, data, n);
    s->buf = bigger;
    s->len += n;
    s->buf[s->len] = '\0';
    return n;
}

typedef struct {
    char *out;
    size_t cap;
} header_pick;

static size_t on_header(char *data, size_t size, size_t nmemb, void *user)
{
    header_pick *h = user;
    size_t n = size * nmemb;
    static const char name[] = "Retry-After:";
    if (h->out && n > sizeof name - 1 && strncasecmp(data, name, sizeof name - 1) == 0) {
        size_t from = sizeof name - 1, to = n;
        while (from < to && (data[from] == ' ' || data[from] == '\t'))
            from++;
        while (to > from && (data[to - 1] == '\r' || data[to - 1] == '\n' || data[to - 1] == ' '))
            to--;
        size_t len = to - from < h->cap - 1 ? to - from : h->cap - 1;
        memcpy(h->out, data + from, len);
        h->out[len] = '\0';
    }
    return n;
}

static void finish(hx_response *r, char *body, size_t len)
{
    r->body = body ? body : strdup("");
    r->body_len = body ? len : 0;
    json_error_t jerr;
    r->json = r->body ? json_loadb(r->body, r->body_len, 0, &jerr) : NULL;
}

hx_response pol_http(const pol_broker *b, const pol_req *q, char *retry_after, size_t ra_len)
{
    hx_response r;
    memset(&r, 0, sizeof r);
    if (retry_after && ra_len)
        retry_after[0] = '\0';
    char url[256], *auth = NULL;
    if (q->tcp)
        snprintf(url, sizeof url, "http://127.0.0.1:%d%s", b->tcp_port, q->path);
    else
        snprintf(url, sizeof url, "http://localhost%s", q->path);
    sink s = { 0 };
    header_pick h = { retry_after, ra_len };
    CURL *c = curl_easy_init();
    if (!c) {
        finish(&r, NULL, 0);
        return r;
    }
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Expect:");
    if (q->authorization && asprintf(&auth, "Authorization: %s", q->authorization) > 0)
        hdrs = curl_slist_append(hdrs, auth);
    if (!q->tcp)
        curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, b->hx.socket_path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, q->method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, POL_REQUEST_MS);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &h);
    if (q->body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, q->body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(q->body));
    } else if (strcmp(q->method, "GET") == 0) {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    double t0 = hx_now_ms();
    r.curl_code = (int)curl_easy_perform(c);
    r.elapsed_ms = hx_now_ms() - t0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    char *ct = NULL;
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
        snprintf(r.content_type, sizeof r.content_type, "%s", ct);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    free(auth);
    finish(&r, s.buf, s.len);
    return r;
}

hx_response pol_lookup(const pol_broker *b, const char *url, const char *extra)
{
    char body[2048];
    pol_fmt(body, sizeof body, "{\"url\": \"%s\"%s}", url, extra ? extra : "");
    pol_req q = { .method = "POST", .path = "/v1/lookup", .body = body };
    hx_response r = pol_http(b, &q, NULL, 0);
    hx_assert_no_sanitizer_report(&b->hx);
    return r;
}

/* ---- a caller under another uid --------------------------------------------- */

static void child_say(int fd, const char *what)
{
    ssize_t w = write(fd, what, strlen(what));
    (void)w;
}

/* Runs in the forked child: plain syscalls only (the parent may have threads). */
static void child_request(const char *socket_path, uid_t id, const char *request, int out)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (setgroups(0, NULL) != 0 || setresgid(id, id, id) != 0 || setresuid(id, id, id) != 0 ||
        getuid() != id || geteuid() != id) {
        child_say(out, "CHILD: could not drop to the requested uid");
        _exit(2);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    size_t plen = strlen(socket_path);
    if (plen >= sizeof sa.sun_path)
        _exit(7);
    memcpy(sa.sun_path, socket_path, plen + 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        child_say(out, "CHILD: connect to the broker socket failed: ");
        child_say(out, strerror(errno));
        _exit(3);
    }
    size_t len = strlen(request), off = 0;
    while (off < len) {
        ssize_t w = write(fd, request + off, len - off);
        if (w <= 0)
            _exit(4);
        off += (size_t)w;
    }
    static char buf[65536];
    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, POL_CHILD_MS) <= 0)
            _exit(5);
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        if (write(out, buf, (size_t)n) != n)
            _exit(6);
    }
    _exit(0);
}

hx_response pol_request_as(const pol_broker *b, uid_t id, const char *method, const char *path,
                           const char *body)
{
    cr_assert(b->world_socket, "start the broker with world_socket for other uids");
    size_t blen = body ? strlen(body) : 0;
    char *request = NULL;
    int rn = asprintf(&request,
                      "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                      method, path, blen, body ? body : "");
    cr_assert(rn > 0);
    int pipefd[2];
    cr_assert(pipe2(pipefd, O_CLOEXEC) == 0);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(pipefd[0]);
        child_request(b->hx.socket_path, id, request, pipefd[1]);
    }
    close(pipefd[1]);
    free(request);

    sink s = { 0 };
    double deadline = hx_now_ms() + POL_CHILD_MS + 5000;
    char chunk[8192];
    for (;;) {
        int left = (int)(deadline - hx_now_ms());
        struct pollfd p = { .fd = pipefd[0], .events = POLLIN };
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        ssize_t n = read(pipefd[0], chunk, sizeof chunk);
        if (n <= 0)
            break;
        on_body(chunk, 1, (size_t)n, &s);
    }
    close(pipefd[0]);
    int st = 0;
    bool reaped = false;
    for (int i = 0; i < 500 && !reaped; i++) {
        reaped = waitpid(pid, &st, WNOHANG) == pid;
        if (!reaped)
            pol_sleep_ms(10);
    }
    if (!reaped) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    hx_response r;
    memset(&r, 0, sizeof r);
    const char *raw = s.buf ? s.buf : "";
    cr_assert(reaped && WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "uid %u client failed (status 0x%x): %.300s", (unsigned)id, st, raw);
    int code = 0;
    const char *head_end = strstr(raw, "\r\n\r\n");
    if (sscanf(raw, "HTTP/1.%*d %d", &code) == 1 && head_end) {
        r.status = code;
        char *payload = strdup(head_end + 4);
        free(s.buf);
        finish(&r, payload, strlen(payload));
    } else {
        finish(&r, s.buf, s.len);
    }
    hx_assert_no_sanitizer_report(&b->hx);
    return r;
}

/* ---- readers -------------------------------------------------------------- */

const char *pol_order(const hx_response *r, char *buf, size_t len)
{
    json_t *log = json_object_get(hx_receipt(r), "attempts_log");
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < json_array_size(log); i++) {
        const char *p = json_string_value(json_object_get(json_array_get(log, i), "provider"));
        int n = snprintf(buf + used, len - used, "%s%s", i ? "," : "", p ? p : "?");
        cr_assert(n >= 0 && (size_t)n < len - used, "attempts_log too long for the buffer");
        used += (size_t)n;
    }
    return buf;
}

const char *pol_receipt_str(const hx_response *r, const char *key)
{
    return json_string_value(json_object_get(hx_receipt(r), key));
}

long long pol_metric(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *line = text; line && *line;) {
        if (strncmp(line, series, n) == 0 && line[n] == ' ')
            return strtoll(line + n + 1, NULL, 10);
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return -1;
}

bool pol_origin_saw(const hx_origin *o, const char *needle, unsigned timeout_ms)
{
    double deadline = hx_now_ms() + timeout_ms;
    for (;;) {
        char *log = hx_read_file(o->log_path, NULL);
        bool seen = log && strstr(log, needle);
        free(log);
        if (seen)
            return true;
        if (hx_now_ms() >= deadline)
            return false;
        pol_sleep_ms(10);
    }
}

void pol_sha256_hex(const char *s, char *out)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    cr_assert(EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL) == 1 && n == 32);
    for (unsigned i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}
