/* The three ways of fetching a page that the benchmark compares. Each checks
 * that the whole page really arrived, so a fast failure never counts. */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "broker/api/request.h"

#define FETCH_TIMEOUT_MS 70000L /* past the tenant's 60 s: 16 lookups of 8 MiB on a busy host */

/* ---- (a) libcurl in process: a fresh easy handle per fetch (no reuse) ---- */

static size_t count_bytes(char *p, size_t size, size_t n, void *user)
{
    (void)p;
    *(size_t *)user += size * n;
    return size * n;
}

static int inproc_fetch(const bench_target *t, void *state, char *err, size_t errlen)
{
    (void)state;
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(err, errlen, "curl_easy_init failed");
        return -1;
    }
    size_t got = 0;
    curl_easy_setopt(h, CURLOPT_URL, t->url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, FETCH_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, count_bytes);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
    if (t->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, t->ca_file);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    if (rc != CURLE_OK || status != 200 || got != t->body_bytes) {
        snprintf(err, errlen, "inproc: %s, HTTP %ld, %zu of %zu bytes", curl_easy_strerror(rc), status,
                 got, t->body_bytes);
        return -1;
    }
    return 0;
}

const bench_fetcher bench_inproc = { "inproc", NULL, inproc_fetch, NULL };

/* ---- (b) one curl process per fetch: curl -s -o /dev/null URL ----------- */

static int curl_proc_fetch(const bench_target *t, void *state, char *err, size_t errlen)
{
    (void)state;
    /* -q: ignore any ~/.curlrc; -f: an HTTP error is a failed fetch. */
    char *argv[16];
    int n = 0;
    argv[n++] = "curl";
    argv[n++] = "-q";
    argv[n++] = "-s";
    argv[n++] = "-f";
    argv[n++] = "--noproxy";
    argv[n++] = "*";
    argv[n++] = "-o";
    argv[n++] = "/dev/null";
    if (t->ca_file) {
        argv[n++] = "--cacert";
        argv[n++] = (char *)t->ca_file;
    }
    argv[n++] = (char *)t->url;
    argv[n] = NULL;
    char *envp[] = { "PATH=/usr/bin:/bin", NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, t->curl_path, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(err, errlen, "curl: cannot spawn %s: %s", t->curl_path, strerror(rc));
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "curl: waitpid: %s", strerror(errno));
            return -1;
        }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, errlen, "curl: exit status 0x%x", st);
        return -1;
    }
    return 0;
}

const bench_fetcher bench_curl_proc = { "curl", NULL, curl_proc_fetch, NULL };

/* ---- (c) verifetch: POST /v1/lookup over the broker's unix socket -------- */

typedef struct {
    CURL *h;                     /* reused: a real client keeps its broker connection */
    char *buf;
    size_t len, cap;
    char body[1024];
    bool shape_checked;          /* the first answer per thread is parsed in full, off the client's CPU */
} lookup_state;

static size_t collect(char *p, size_t size, size_t n, void *user)
{
    lookup_state *s = user;
    size_t add = size * n;
    if (s->len + add + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 65536;
        while (cap < s->len + add + 1)
            cap *= 2;
        char *nb = realloc(s->buf, cap);
        if (!nb)
            return 0;
        s->buf = nb;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, p, add);
    s->len += add;
    s->buf[s->len] = '\0';
    return add;
}

static void *lookup_init(const bench_target *t)
{
    lookup_state *s = calloc(1, sizeof *s);
    if (!s || !(s->h = curl_easy_init())) {
        free(s);
        return NULL;
    }
    /* The floor answers with the whole text; so does verifetch, up to the
     * largest page the API returns at once (the default is 20,000). */
    snprintf(s->body, sizeof s->body,
             "{\"url\":\"%s\",\"min_chars\":1,\"must_contain\":\"Paragraph 0:\",\"max_chars\":%u}", t->url,
             VF_MAX_MAX_CHARS);
    struct curl_slist *hdr = NULL;
    curl_easy_setopt(s->h, CURLOPT_URL, "http://localhost/v1/lookup");
    curl_easy_setopt(s->h, CURLOPT_UNIX_SOCKET_PATH, t->socket_path);
    curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(s->h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(s->h, CURLOPT_TIMEOUT_MS, FETCH_TIMEOUT_MS);
    curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, s->body);
    curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(s->h, CURLOPT_WRITEDATA, s);
    hdr = curl_slist_append(hdr, "Content-Type: application/json");
    curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(s->h, CURLOPT_PRIVATE, hdr);
    return s;
}

static void lookup_done(void *state)
{
    lookup_state *s = state;
    if (!s)
        return;
    struct curl_slist *hdr = NULL;
    curl_easy_getinfo(s->h, CURLINFO_PRIVATE, (char **)&hdr);
    curl_easy_cleanup(s->h);
    curl_slist_free_all(hdr);
    free(s->buf);
    free(s);
}

/* Full check of one answer: a successful ToolResult whose receipt says ok and
 * whose text block holds the page. */
static int check_shape(const lookup_state *s, const bench_target *t, char *err, size_t errlen)
{
    json_error_t je;
    json_t *doc = json_loadb(s->buf, s->len, 0, &je);
    const char *status = NULL, *text = NULL;
    json_t *receipt = NULL;
    int ok = 0;
    json_int_t chars = -1;
    if (doc && json_unpack_ex(doc, &je, 0, "{s:s, s:[{s:o}, {s:s}]}", "status", &status, "content", "json",
                              &receipt, "text", &text) == 0 &&
        json_unpack_ex(receipt, &je, 0, "{s:b, s:I}", "ok", &ok, "total_chars", &chars) == 0 &&
        strcmp(status, "success") == 0 && ok && (size_t)chars >= t->min_text_chars &&
        strstr(text, "Paragraph 0:")) {
        json_decref(doc);
        return 0;
    }
    /* What went wrong is in the first attempt's detail, past the receipt's head. */
    const char *detail = NULL;
    if (receipt)
        json_unpack(receipt, "{s:[{s:s}]}", "attempts_log", "detail", &detail);
    snprintf(err, errlen, "verifetch: unexpected answer (%s; attempt: %.200s): %.200s", doc ? je.text : "not JSON",
             detail ? detail : "-", s->buf);
    json_decref(doc);
    return -1;
}

static int lookup_fetch(const bench_target *t, void *state, char *err, size_t errlen)
{
    lookup_state *s = state;
    if (!s) {
        snprintf(err, errlen, "verifetch: client setup failed");
        return -1;
    }
    s->len = 0;
    CURLcode rc = curl_easy_perform(s->h);
    long status = 0;
    curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK || status != 200 || !s->buf) {
        snprintf(err, errlen, "verifetch: %s, HTTP %ld: %.200s", curl_easy_strerror(rc), status,
                 s->buf && s->len ? s->buf : "");
        return -1;
    }
    if (!s->shape_checked) {
        /* Parsing a 1 MiB answer costs several lookups' worth of a client's
         * CPU; it is the harness's check, not the client's work. */
        s->shape_checked = true;
        double t0 = bench_thread_cpu_ms();
        int rc = check_shape(s, t, err, errlen);
        bench_cpu_not_client(bench_thread_cpu_ms() - t0);
        return rc;
    }
    /* Cheap check for the rest; the page itself never contains these strings. */
    if (!strstr(s->buf, "\"status\":\"success\"") || !strstr(s->buf, "Paragraph 0:")) {
        snprintf(err, errlen, "verifetch: lookup did not succeed: %.300s", s->buf);
        return -1;
    }
    return 0;
}

const bench_fetcher bench_verifetch = { "verifetch", lookup_init, lookup_fetch, lookup_done };
