/* E2E: manners on the web. A tenant obeys robots.txt (the default): the
 * origin's robots.txt (tests/origin/origin.py) is fetched once per origin and
 * TTL, through the same confined path as a page; a disallowed URL is
 * unusable_content "robots.txt disallows ..." and is never requested; the
 * group for the tenant's own User-Agent product token wins over "*". The
 * User-Agent itself is the tenant's, "verifetch/<version>" by default. */
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

static void expect_ok(const char *path)
{
    const char *url = tc_url(&t, path);
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

static void expect_disallowed(const char *path, const char *detail_part)
{
    const char *url = tc_url(&t, path);
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "unusable_content", HX_NULL, NULL);
    e.attempts[0].detail_all[0] = "robots.txt disallows";
    e.attempts[0].detail_all[1] = detail_part;
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "robots.txt disallows"), "the failure line must say why: %s", text);
    free(text);
    hx_response_free(&r);
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
