/* (b) The floor: everything a lookup must do, in one process with no
 * sandbox, no IPC and no extra copies -- a fresh libcurl fetch, then the very
 * code the worker and the broker run on the body (the worker's wall
 * fingerprints and text library: charset + HTML extraction + page metadata;
 * the broker's judge: UTF-8 check, classify with must_contain and the page's
 * evidence, redaction and the receipt, the same JSON writer, the answer cut
 * up as the broker sends it: bench_answer.c). verifetch can only approach
 * this; the ratio to it is what isolation costs. */
#include "bench.h"
#include "bench_judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "worker/content/extract.h"
#include "worker/content/wall_signals.h"

#define FLOOR_TIMEOUT_MS 20000L

typedef struct {
    char *data;
    size_t len, cap, max;
    bool too_big;
} body_buf;

static size_t collect(char *p, size_t size, size_t n, void *user)
{
    body_buf *b = user;
    size_t add = size * n;
    if (b->len + add > b->max) {
        b->too_big = true;
        return 0;
    }
    if (b->len + add + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64 * 1024;
        while (cap < b->len + add + 1)
            cap *= 2;
        char *nb = realloc(b->data, cap);
        if (!nb)
            return 0;
        b->data = nb;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, add);
    b->len += add;
    return add;
}

int bench_floor_setup(void)
{
    char err[256];
    if (bench_judge_setup(err, sizeof err) != 0) {
        fprintf(stderr, "bench: floor set-up failed: %s\n", err);
        return -1;
    }
    return 0;
}

void bench_floor_teardown(void)
{
    bench_judge_teardown();
}

static int floor_fetch(const bench_target *t, void *state, char *err, size_t errlen)
{
    (void)state;
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(err, errlen, "curl_easy_init failed");
        return -1;
    }
    body_buf body = { .max = BENCH_MAX_BODY_BYTES };
    curl_easy_setopt(h, CURLOPT_URL, t->url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, FLOOR_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    if (t->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, t->ca_file);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    char *ctype_ref = NULL;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ctype_ref);
    char *ctype = ctype_ref ? strdup(ctype_ref) : NULL;
    curl_easy_cleanup(h);
    int result = -1;
    if (rc != CURLE_OK || status != 200 || body.len != t->body_bytes) {
        snprintf(err, errlen, "floor: %s, HTTP %ld, %zu of %zu bytes", curl_easy_strerror(rc), status, body.len,
                 t->body_bytes);
        goto out;
    }
    /* As the worker does for a page (worker_job.c): wall-signal fingerprints of
     * the raw body, then extraction with default rendering. */
    vf_wall_signals walls = { 0 };
    vf_wall_signals_scan_html(&walls, body.data ? body.data : "", body.len);
    vf_extracted ex = { 0 };
    vf_extract_opts xo = { .render = 0, .page_url = t->url };
    if (!vf_extract_with(&xo, VF_MODE_RAW, NULL, (int)status, ctype, body.data ? body.data : "", body.len,
                         BENCH_MAX_BODY_BYTES, &ex)) {
        snprintf(err, errlen, "floor: extraction ran out of memory");
        goto out;
    }
    /* The body is no longer needed once its text exists (the worker, too,
     * sends only the text). */
    free(body.data);
    body.data = NULL;
    if (bench_judge_page(t->url, ctype, status, &ex, &walls, t->min_text_chars, err, errlen) > 0)
        result = 0;
    vf_extracted_free(&ex);
out:
    free(body.data);
    free(ctype);
    return result;
}

const bench_fetcher bench_floor = { "floor", NULL, floor_fetch, NULL };
