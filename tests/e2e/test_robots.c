/* E2E: manners on the web. A tenant obeys robots.txt (the default): the
 * origin's robots.txt (tests/origin/origin.py) is fetched once per origin and
 * TTL, through the same confined path as a page; a disallowed URL is
 * unusable_content "robots.txt disallows ..." and is never requested; the
 * group for the tenant's own User-Agent product token wins over "*". The
 * User-Agent itself is the tenant's, "verifetch/<version>" by default.
 * Concurrent lookups to an origin whose robots.txt is not cached share one
 * robots.txt fetch and its verdict. */
#include <curl/curl.h>
#include <pthread.h>
#include <unistd.h>

#include "test_common.h"

TestSuite(robots, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static tc_env t;
static const char *tenant_extra;

static void with_tenant_extra(hx_broker_opts *o)
{
    o->tenant_extra = tenant_extra;
}

static void start(const char *extra)
{
    tenant_extra = extra;
    tc_start(&t, with_tenant_extra);
}

/* How many times the origin saw "REQ <line...>". */
static int origin_requests(const char *line)
{
    char *log = hx_read_file(t.origin.log_path, NULL);
    int n = 0;
    for (const char *p = log ? strstr(log, line) : NULL; p; p = strstr(p + 1, line))
        n++;
    free(log);
    return n;
}

static void check_ok(const char *url, hx_response *r)
{
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    free(hx_check_tool_result(r, &e));
    hx_response_free(r);
}

static void expect_ok(const char *path)
{
    const char *url = tc_url(&t, path);
    hx_response r = tc_lookup(&t, url, NULL);
    check_ok(url, &r);
}

static void check_disallowed(const char *url, hx_response *r, const char *detail_part)
{
    hx_receipt_expect e = tc_expect_one(false, url, "unusable_content", HX_NULL, NULL);
    e.attempts[0].detail_all[0] = "robots.txt disallows";
    e.attempts[0].detail_all[1] = detail_part;
    char *text = hx_check_tool_result(r, &e);
    cr_assert(strstr(text, "robots.txt disallows"), "the failure line must say why: %s", text);
    free(text);
    hx_response_free(r);
}

static void expect_disallowed(const char *path, const char *detail_part)
{
    const char *url = tc_url(&t, path);
    hx_response r = tc_lookup(&t, url, NULL);
    check_disallowed(url, &r, detail_part);
    char req[256];
    snprintf(req, sizeof req, "REQ GET %s ", path);
    cr_assert_eq(origin_requests(req), 0, "a disallowed URL was requested: %s", path);
}

Test(robots, disallowed_url_is_unusable_and_never_requested)
{
    start("robots = \"obey\";");
    expect_disallowed("/members/list", "Disallow: /members");
    expect_ok("/members/open");   /* the longer Allow wins */
    expect_ok("/page");
}

Test(robots, robots_txt_is_fetched_once_per_origin_and_ttl)
{
    start("robots_ttl_s = 2;");   /* obey is the default */
    expect_ok("/page");
    expect_ok("/echo");
    expect_disallowed("/members/list", "Disallow: /members");
    cr_assert_eq(origin_requests("REQ GET /robots.txt "), 1, "robots.txt must come from the cache");
    usleep(2200 * 1000);
    expect_ok("/page");
    cr_assert_eq(origin_requests("REQ GET /robots.txt "), 2, "an expired robots.txt must be fetched again");
}

/* The group naming our product token (case-insensitively) replaces "*". */
Test(robots, the_group_for_our_user_agent_wins)
{
    start("user_agent = \"strictbot/2.0 (+https://example.test/bot)\";");
    expect_ok("/page");
    expect_disallowed("/echo", "Disallow: /");
    expect_ok("/page");
}

/* RFC 9309: a robots.txt that answers 4xx allows everything (and is
 * remembered); one that answers 5xx disallows everything, is not
 * remembered, and the page is never requested. */
Test(robots, a_robots_txt_answering_4xx_allows_everything)
{
    start("robots_ttl_s = 1;");
    expect_ok("/robots-status?answer=404");
    usleep(1200 * 1000);   /* the 200 robots.txt expires */
    expect_ok("/members/list");   /* disallowed by the 200 robots.txt */
    cr_assert_eq(origin_requests("REQ GET /robots.txt "), 2);
}

Test(robots, a_robots_txt_answering_5xx_disallows_everything_and_is_asked_again)
{
    start("robots_ttl_s = 1;");
    expect_ok("/robots-status?answer=503");
    usleep(1200 * 1000);
    expect_disallowed("/page", "HTTP 503");
    expect_disallowed("/page", "HTTP 503");
    cr_assert_eq(origin_requests("REQ GET /robots.txt "), 3, "a 5xx robots.txt must not be cached");
}

Test(robots, ignore_fetches_without_asking)
{
    start("robots = \"ignore\";");
    expect_ok("/members/list");
    cr_assert_eq(origin_requests("REQ GET /robots.txt "), 0, "robots = \"ignore\" still asked");
}

Test(robots, user_agent_is_the_tenants_and_defaults_to_verifetch)
{
    start("robots = \"obey\";");
    const char *url = tc_url(&t, "/echo");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "User-Agent: verifetch/" VERIFETCH_VERSION "\n"), "default User-Agent: %s", text);
    free(text);
    hx_response_free(&r);
    hx_broker_stop(&t.broker);

    tenant_extra = "user_agent = \"ExampleAgent/1.0 (ops@example.test)\";";
    hx_broker_opts_default(&t.opts);
    t.opts.tenant_extra = tenant_extra;
    hx_broker_start(&t.broker, &t.opts);
    r = tc_lookup(&t, url, NULL);
    text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "User-Agent: ExampleAgent/1.0 (ops@example.test)\n"), "tenant User-Agent: %s", text);
    free(text);
    hx_response_free(&r);
}

/* Tells the origin directly (not through the broker, which would fetch and
 * cache robots.txt): later robots.txt requests wait ms, then answer status. */
static void origin_robots_answer(int ms, int status)
{
    char path[96], url[512];
    snprintf(path, sizeof path, "/robots-delay?ms=%d&answer=%d", ms, status);
    hx_origin_url(&t.origin, false, path, url, sizeof url);
    CURL *c = curl_easy_init();
    cr_assert_not_null(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fwrite);
    FILE *sink = fopen("/dev/null", "w");
    curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
    CURLcode rc = curl_easy_perform(c);
    long status_seen = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status_seen);
    curl_easy_cleanup(c);
    fclose(sink);
    cr_assert(rc == CURLE_OK && status_seen == 200, "origin /robots-delay: curl %d, HTTP %ld", rc, status_seen);
}

#define N_TOGETHER 8

typedef struct {
    char url[512];
    hx_response r;
} together_arg;

static void *lookup_thread(void *p)
{
    together_arg *a = p;
    a->r = hx_lookup(&t.broker, "{\"url\": \"%s\"}", a->url);
    return NULL;
}

/* N_TOGETHER lookups at once to the origin, path i from paths(i). */
static void lookups_together(together_arg *a, const char *(*paths)(int i))
{
    pthread_t th[N_TOGETHER];
    for (int i = 0; i < N_TOGETHER; i++) {
        char path[64];
        snprintf(path, sizeof path, "%s?n=%d", paths(i), i);
        hx_origin_url(&t.origin, false, path, a[i].url, sizeof a[i].url);
        cr_assert_eq(pthread_create(&th[i], NULL, lookup_thread, &a[i]), 0);
    }
    for (int i = 0; i < N_TOGETHER; i++)
        pthread_join(th[i], NULL);
}

static const char *page_or_members(int i)
{
    return i % 2 ? "/members/list" : "/page";
}

static const char *page_only(int i)
{
    (void)i;
    return "/page";
}

/* A slow robots.txt: every lookup arrives while the first is fetching it. */
Test(robots, concurrent_lookups_to_a_fresh_origin_share_one_robots_fetch)
{
    start("robots = \"obey\";");
    origin_robots_answer(700, 200);
    together_arg a[N_TOGETHER];
    lookups_together(a, page_or_members);
    for (int i = 0; i < N_TOGETHER; i++) {
        if (i % 2)
            check_disallowed(a[i].url, &a[i].r, "Disallow: /members");
        else
            check_ok(a[i].url, &a[i].r);
    }
    cr_assert_eq(origin_requests("REQ GET /robots.txt "), 1, "%d lookups at once must fetch robots.txt once",
                 N_TOGETHER);
    cr_assert_eq(origin_requests("REQ GET /members/list"), 0, "a disallowed URL was requested");
}

/* The shared answer is a 5xx: every waiter is refused as the first lookup
 * is, and, as a 5xx is never cached, the next lookup asks again. */
Test(robots, concurrent_lookups_share_a_5xx_robots_answer_which_is_asked_again_later)
{
    start("robots = \"obey\";");
    origin_robots_answer(700, 503);
    together_arg a[N_TOGETHER];
    lookups_together(a, page_only);
    for (int i = 0; i < N_TOGETHER; i++)
        check_disallowed(a[i].url, &a[i].r, "HTTP 503");
    cr_assert_eq(origin_requests("REQ GET /robots.txt "), 1, "%d lookups at once must fetch robots.txt once",
                 N_TOGETHER);
    cr_assert_eq(origin_requests("REQ GET /page"), 0, "a page was requested though robots.txt answered 503");
    origin_robots_answer(0, 200);
    expect_ok("/page");
    cr_assert_eq(origin_requests("REQ GET /robots.txt "), 2);
}

/* A lookup whose client gives up after 400 ms (curl closes the connection). */
static void *impatient_lookup(void *p)
{
    const char *url = p;
    char body[600];
    snprintf(body, sizeof body, "{\"url\": \"%s\"}", url);
    CURL *c = curl_easy_init();
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    FILE *sink = fopen("/dev/null", "w");
    if (c && hdrs && sink) {
        curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, t.broker.socket_path);
        curl_easy_setopt(c, CURLOPT_URL, "http://localhost/v1/lookup");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 400L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fwrite);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
        curl_easy_perform(c);
    }
    if (sink)
        fclose(sink);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    return NULL;
}

/* The lookup fetching robots.txt for others is cancelled: its "unreachable"
 * says nothing about the origin, so a waiter fetches robots.txt itself
 * rather than going ahead unchecked. */
Test(robots, a_waiter_asks_again_when_the_fetching_lookup_is_cancelled)
{
    start("robots = \"obey\";");
    /* The leader's client gives up at 400 ms; robots.txt comes at 3 s, so
     * the cancellation has 2.6 s to land even in a loaded ASan build (1.5 s
     * was not always enough there). */
    origin_robots_answer(3000, 200);
    char leader_url[512], waiter_url[512];
    hx_origin_url(&t.origin, false, "/page?leader", leader_url, sizeof leader_url);
    hx_origin_url(&t.origin, false, "/members/list", waiter_url, sizeof waiter_url);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, impatient_lookup, leader_url), 0);
    for (int i = 0; i < 300 && origin_requests("REQ GET /robots.txt ") == 0; i++)
        usleep(10 * 1000);
    cr_assert_eq(origin_requests("REQ GET /robots.txt "), 1, "the first lookup never asked for robots.txt");
    hx_response r = hx_lookup(&t.broker, "{\"url\": \"%s\"}", waiter_url);
    pthread_join(th, NULL);
    check_disallowed(waiter_url, &r, "Disallow: /members");
    cr_assert_eq(origin_requests("REQ GET /robots.txt "), 2,
                 "the waiter must fetch robots.txt itself once the fetching lookup was cancelled");
    cr_assert_eq(origin_requests("REQ GET /members/list"), 0, "a disallowed URL was requested");
    cr_assert_eq(origin_requests("REQ GET /page?leader"), 0, "the cancelled lookup went on to its page\nbroker: %s",
                 hx_broker_log(&t.broker));
}
