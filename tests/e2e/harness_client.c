/* E2E harness: HTTP client for the broker's unix socket (libcurl), bodies
 * parsed with jansson. */
#include "harness_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <curl/curl.h>

#define HX_MAX_RESPONSE (32u << 20)
#define HX_REQUEST_TIMEOUT_MS 30000L

typedef struct {
    char *buf;
    size_t len, cap;
    bool overflow;
} sink;

static size_t on_data(char *data, size_t size, size_t nmemb, void *user)
{
    sink *s = user;
    size_t n = size * nmemb;
    if (s->len + n + 1 > HX_MAX_RESPONSE) {
        s->overflow = true;
        return 0;
    }
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n + 1)
            cap *= 2;
        char *bigger = realloc(s->buf, cap);
        if (!bigger)
            return 0;
        s->buf = bigger;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    s->buf[s->len] = '\0';
    return n;
}

hx_response hx_request(const hx_broker *b, const char *method, const char *path,
                       const char *body, size_t body_len)
{
    hx_response r;
    memset(&r, 0, sizeof r);
    sink s = { 0 };
    char url[512];
    hx_fmt(url, sizeof url, "http://localhost%s", path);

    CURL *c = curl_easy_init();
    cr_assert_not_null(c);
    struct curl_slist *hdrs = NULL;
    hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Expect:");   /* no 100-continue round trip */
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, b->socket_path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, HX_REQUEST_TIMEOUT_MS);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    } else if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }

    double t0 = hx_now_ms();
    r.curl_code = (int)curl_easy_perform(c);
    r.elapsed_ms = hx_now_ms() - t0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    char *ct = NULL;
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
        hx_fmt(r.content_type, sizeof r.content_type, "%s", ct);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);

    hx_assert_no_sanitizer_report(b);
    r.body = s.buf ? s.buf : strdup("");
    r.body_len = s.len;
    json_error_t jerr;
    r.json = json_loadb(r.body, r.body_len, 0, &jerr);
    return r;
}

hx_response hx_lookup(const hx_broker *b, const char *fmt, ...)
{
    char *body = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&body, fmt, ap);
    va_end(ap);
    cr_assert(n >= 0);
    hx_response r = hx_request(b, "POST", "/v1/lookup", body, (size_t)n);
    free(body);
    return r;
}

void hx_response_free(hx_response *r)
{
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}
