/* A multi-threaded lookup client for the broker's unix socket. It never
 * asserts (Criterion asserts belong to the test's main thread): each reply is
 * recorded and judged afterwards. */
#include "hostile.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#define HH_MAX_REPLY (8u << 20)
#define HH_MAX_THREADS 128

typedef struct {
    const char *socket_path;
    size_t n;
    hh_body_fn body_for;
    void *arg;
    unsigned timeout_ms;
    double wall_deadline_ms;   /* 0 = none */
    unsigned refused_pause_us; /* after a 503, before this thread's next request */
    hh_reply *out;
    atomic_size_t next;
    atomic_size_t issued;
} batch;

typedef struct {
    hh_reply *r;
    size_t cap;
    bool overflow;
} sink;

static size_t on_data(char *data, size_t size, size_t nmemb, void *user)
{
    sink *s = user;
    size_t n = size * nmemb;
    hh_reply *r = s->r;
    if (r->body_len + n + 1 > HH_MAX_REPLY) {
        s->overflow = true;
        return 0;
    }
    if (r->body_len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < r->body_len + n + 1)
            cap *= 2;
        char *bigger = realloc(r->body, cap);
        if (!bigger)
            return 0;
        r->body = bigger;
        s->cap = cap;
    }
    memcpy(r->body + r->body_len, data, n);
    r->body_len += n;
    r->body[r->body_len] = '\0';
    return n;
}

static void one_lookup(CURL *c, batch *b, size_t i)
{
    hh_reply *r = &b->out[i];
    memset(r, 0, sizeof *r);
    char *body = b->body_for(i, b->arg);
    sink s = { .r = r };
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Expect:");
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, b->socket_path);
    curl_easy_setopt(c, CURLOPT_URL, "http://localhost/v1/lookup");
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)b->timeout_ms);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    double t0 = hx_now_ms();
    r->started_ms = t0;
    r->curl_code = (int)curl_easy_perform(c);
    r->elapsed_ms = hx_now_ms() - t0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(hdrs);
    free(body);
    if (!r->body)
        r->body = strdup("");
}

static void *client_thread(void *arg)
{
    batch *b = arg;
    CURL *c = curl_easy_init();
    for (;;) {
        if (b->wall_deadline_ms > 0 && hx_now_ms() >= b->wall_deadline_ms)
            break;
        size_t i = atomic_fetch_add(&b->next, 1);
        if (i >= b->n)
            break;
        atomic_fetch_add(&b->issued, 1);
        if (c)
            one_lookup(c, b, i);
        else
            b->out[i] = (hh_reply){ .curl_code = CURLE_FAILED_INIT, .body = strdup("") };
        if (b->out[i].status == 503 && b->refused_pause_us)
            usleep(b->refused_pause_us);
    }
    if (c)
        curl_easy_cleanup(c);
    return NULL;
}

size_t hh_lookups_paced(const char *socket_path, size_t n, unsigned threads, hh_body_fn body_for, void *arg,
                        unsigned timeout_ms, double wall_deadline_ms, unsigned refused_pause_us, hh_reply *out)
{
    batch b = { .socket_path = socket_path, .n = n, .body_for = body_for, .arg = arg,
                .timeout_ms = timeout_ms, .wall_deadline_ms = wall_deadline_ms,
                .refused_pause_us = refused_pause_us, .out = out };
    atomic_init(&b.next, 0);
    atomic_init(&b.issued, 0);
    if (threads == 0)
        threads = 1;
    if (threads > HH_MAX_THREADS)
        threads = HH_MAX_THREADS;
    pthread_t tids[HH_MAX_THREADS];
    unsigned started = 0;
    for (; started < threads; started++)
        if (pthread_create(&tids[started], NULL, client_thread, &b) != 0)
            break;
    if (started == 0)
        client_thread(&b);
    for (unsigned t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    /* Indices are issued in order, so the first `issued` replies are the real ones. */
    size_t issued = atomic_load(&b.issued);
    for (size_t i = issued; i < n; i++)
        out[i] = (hh_reply){ .body = NULL };
    return issued;
}

size_t hh_lookups_until(const char *socket_path, size_t n, unsigned threads, hh_body_fn body_for, void *arg,
                        unsigned timeout_ms, double wall_deadline_ms, hh_reply *out)
{
    return hh_lookups_paced(socket_path, n, threads, body_for, arg, timeout_ms, wall_deadline_ms, 0, out);
}

void hh_lookups(const char *socket_path, size_t n, unsigned threads, hh_body_fn body_for, void *arg,
                unsigned timeout_ms, hh_reply *out)
{
    hh_lookups_until(socket_path, n, threads, body_for, arg, timeout_ms, 0, out);
}

void hh_reply_free(hh_reply *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
}

hx_response hh_as_response(hh_reply *r)
{
    hx_response x;
    memset(&x, 0, sizeof x);
    x.status = r->status;
    x.curl_code = r->curl_code;
    x.body = r->body ? r->body : strdup("");
    x.body_len = r->body_len;
    x.elapsed_ms = r->elapsed_ms;
    x.json = json_loadb(x.body, x.body_len, 0, NULL);
    r->body = NULL;
    r->body_len = 0;
    return x;
}

char *hh_slow_lookup_body(const hx_origin *o, unsigned ms, size_t i)
{
    char *body = NULL, path[64], url[256];
    snprintf(path, sizeof path, "/slow?ms=%u&n=%zu", ms, i);
    if (asprintf(&body, "{\"url\": \"%s\"}", hx_origin_url(o, false, path, url, sizeof url)) < 0)
        return NULL;
    return body;
}
