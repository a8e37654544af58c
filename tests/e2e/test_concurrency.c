/* E2E: lookups are served concurrently (one worker each), and every answer
 * still carries its own complete receipt. */
#include "test_common.h"

#include <curl/curl.h>

TestSuite(concurrency, .init = hx_setup, .fini = hx_teardown, .timeout = 30);

#define N_PARALLEL 6
#define SLOW_MS 600

static tc_env t;

typedef struct {
    char *buf;
    size_t len;
} body_buf;

static size_t collect(char *data, size_t size, size_t nmemb, void *user)
{
    body_buf *b = user;
    size_t n = size * nmemb;
    if (b->len + n > (1u << 20))
        return 0;
    char *bigger = realloc(b->buf, b->len + n + 1);
    if (!bigger)
        return 0;
    memcpy(bigger + b->len, data, n);
    b->buf = bigger;
    b->len += n;
    b->buf[b->len] = '\0';
    return n;
}

Test(concurrency, parallel_lookups_overlap_and_all_succeed)
{
    tc_start(&t, NULL);
    char urls[N_PARALLEL][256], bodies[N_PARALLEL][320];
    CURL *easy[N_PARALLEL];
    body_buf out[N_PARALLEL];
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    CURLM *multi = curl_multi_init();
    for (int i = 0; i < N_PARALLEL; i++) {
        char path[64];
        snprintf(path, sizeof path, "/slow?ms=%d&n=%d", SLOW_MS, i);   /* distinct URLs */
        hx_origin_url(&t.origin, false, path, urls[i], sizeof urls[i]);
        snprintf(bodies[i], sizeof bodies[i], "{\"url\": \"%s\"}", urls[i]);
        out[i] = (body_buf){ 0 };
        easy[i] = curl_easy_init();
        curl_easy_setopt(easy[i], CURLOPT_UNIX_SOCKET_PATH, t.broker.socket_path);
        curl_easy_setopt(easy[i], CURLOPT_URL, "http://localhost/v1/lookup");
        curl_easy_setopt(easy[i], CURLOPT_POSTFIELDS, bodies[i]);
        curl_easy_setopt(easy[i], CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(easy[i], CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy[i], CURLOPT_TIMEOUT_MS, 20000L);
        curl_easy_setopt(easy[i], CURLOPT_WRITEFUNCTION, collect);
        curl_easy_setopt(easy[i], CURLOPT_WRITEDATA, &out[i]);
        curl_multi_add_handle(multi, easy[i]);
    }
    double t0 = hx_now_ms();
    int running = 1;
    while (running) {
        curl_multi_perform(multi, &running);
        if (running)
            curl_multi_poll(multi, NULL, 0, 100, NULL);
        cr_assert_lt(hx_now_ms() - t0, 25000.0, "parallel lookups did not finish");
    }
    double elapsed = hx_now_ms() - t0;

    for (int i = 0; i < N_PARALLEL; i++) {
        hx_response r = { 0 };
        curl_easy_getinfo(easy[i], CURLINFO_RESPONSE_CODE, &r.status);
        r.body = out[i].buf ? out[i].buf : strdup("");
        r.body_len = out[i].len;
        r.json = json_loadb(r.body, r.body_len, 0, NULL);
        hx_receipt_expect e = tc_expect_one(true, urls[i], "ok", 200, "usable content");
        char *text = hx_check_tool_result(&r, &e);
        cr_assert(strstr(text, "verifetch origin article"), "lookup %d text: %s", i, text);
        free(text);
        hx_response_free(&r);
        curl_multi_remove_handle(multi, easy[i]);
        curl_easy_cleanup(easy[i]);
    }
    curl_multi_cleanup(multi);
    curl_slist_free_all(hdrs);
    /* Serial would be N_PARALLEL * SLOW_MS = 3.6 s; overlapping stays well under half. */
    cr_assert_lt(elapsed, N_PARALLEL * SLOW_MS / 2.0, "%d lookups of %d ms took %.0f ms: serialised?",
                 N_PARALLEL, SLOW_MS, elapsed);
    hx_assert_no_sanitizer_report(&t.broker);
    pid_t keep[] = { t.origin.pid };
    hx_broker_stop_checked(&t.broker, keep, 1);
}
