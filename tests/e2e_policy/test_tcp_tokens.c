/* E2E: the loopback TCP listener identifies callers by bearer token (stored
 * as SHA-256 only), and the listener itself is never a fetch target. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "pol.h"

TestSuite(tcp_tokens, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static const char token[] = "vf-e2e-token-3f9c1d7a2b6e4058";

static hx_origin origin;
static pol_broker broker;
static pol_broker_opts opts;
static char tenants[1024];

static void start_with_token(void)
{
    hx_origin_start(&origin, NULL, NULL);
    char hex[65];
    pol_sha256_hex(token, hex);
    pol_fmt(tenants, sizeof tenants,
            "{ name = \"local\"; uids = [ 0 ]; " POL_EGRESS_LOOPBACK " },\n"
            "{ name = \"remote\"; tokens = [ \"sha256:%s\" ]; " POL_EGRESS_LOOPBACK " }", hex);
    opts = (pol_broker_opts){ .tenants = tenants, .listen_extra = "tcp = \"127.0.0.1:0\";" };
    pol_broker_start(&broker, &opts);
    cr_assert_gt(broker.tcp_port, 0, "no TCP port announced");
}

static hx_response tcp_call(const char *authorization, const char *method, const char *path,
                            const char *body)
{
    pol_req q = { .tcp = true, .authorization = authorization, .method = method, .path = path,
                  .body = body };
    hx_response r = pol_http(&broker, &q, NULL, 0);
    hx_assert_no_sanitizer_report(&broker.hx);
    return r;
}

Test(tcp_tokens, right_token_is_served_as_its_tenant)
{
    start_with_token();
    char auth[128], url[256], body[512];
    pol_fmt(auth, sizeof auth, "Bearer %s", token);
    hx_response h = tcp_call(auth, "GET", "/v1/health", NULL);
    cr_assert_eq(h.status, 200, "health with the token: %ld (curl %d) %s", h.status, h.curl_code, h.body);
    hx_response_free(&h);

    pol_fmt(body, sizeof body, "{\"url\": \"%s\"}", hx_origin_url(&origin, false, "/page", url, sizeof url));
    hx_response r = tcp_call(auth, "POST", "/v1/lookup", body);
    hx_receipt_expect e = {
        .ok = true, .url = url, .max_attempts = -1, .providers_available = 1, .n_attempts = 1,
        .attempts = { { .provider = "direct", .outcome = "ok", .http_status = 200 } },
    };
    free(hx_check_tool_result(&r, &e));
    cr_assert_str_eq(pol_receipt_str(&r, "tenant"), "remote");
    hx_response_free(&r);
}

Test(tcp_tokens, wrong_or_missing_token_is_forbidden)
{
    start_with_token();
    char hex[65], stored[128], truncated[128], url[256], body[512];
    pol_sha256_hex(token, hex);
    pol_fmt(stored, sizeof stored, "Bearer sha256:%s", hex);   /* the stored hash is not the token */
    pol_fmt(truncated, sizeof truncated, "Bearer %.*s", (int)strlen(token) - 1, token);
    pol_fmt(body, sizeof body, "{\"url\": \"%s\"}", hx_origin_url(&origin, false, "/page", url, sizeof url));
    static char overlong[8200];   /* longer than any token the broker hashes */
    memcpy(overlong, "Bearer ", 7);
    memset(overlong + 7, 'a', sizeof overlong - 8);
    const char *auths[] = { NULL, "Bearer wrong-token", stored, truncated, "Basic dmY6dmY=", "Bearer ",
                            overlong };
    for (size_t i = 0; i < sizeof auths / sizeof *auths; i++) {
        hx_response r = tcp_call(auths[i], "POST", "/v1/lookup", body);
        cr_assert_eq(r.status, 403, "Authorization '%.40s': HTTP %ld %s", auths[i] ? auths[i] : "(none)",
                     r.status, r.body);
        cr_assert(json_is_object(json_object_get(r.json, "error")), "403 is not a JSON error: %s", r.body);
        cr_assert_null(json_object_get(r.json, "content"));
        hx_response_free(&r);
        hx_response m = tcp_call(auths[i], "GET", "/metrics", NULL);
        cr_assert_eq(m.status, 403, "/metrics with '%.40s': HTTP %ld", auths[i] ? auths[i] : "(none)", m.status);
        hx_response_free(&m);
    }
    cr_assert_eq(hx_origin_connections(&origin), 0, "a refused TCP caller's lookup reached the origin");
}

/* Even with 127.0.0.1 allowed on any port, the broker's own listener is refused. */
Test(tcp_tokens, broker_listener_is_never_a_target)
{
    start_with_token();
    char auth[128], url[128], body[256];
    pol_fmt(auth, sizeof auth, "Bearer %s", token);
    const char *hosts[] = { "127.0.0.1", "0.0.0.0", "127.1", "2130706433" };
    for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++) {
        pol_fmt(url, sizeof url, "http://%s:%d/v1/health", hosts[i], broker.tcp_port);
        pol_fmt(body, sizeof body, "{\"url\": \"%s\"}", url);
        hx_response over_tcp = tcp_call(auth, "POST", "/v1/lookup", body);
        hx_response over_unix = pol_lookup(&broker, url, NULL);
        const hx_response *both[] = { &over_tcp, &over_unix };
        for (size_t k = 0; k < 2; k++) {
            hx_receipt_expect e = {
                .ok = false, .url = url, .max_attempts = -1, .providers_available = 1,
                .failure_reason = "all_providers_failed", .n_attempts = 1,
                .attempts = { { .provider = "direct", .outcome = "transport_error", .http_status = HX_NULL,
                                .detail_all = { "egress denied", "(rule broker_self)" } } },
            };
            free(hx_check_tool_result(both[k], &e));
        }
        hx_response_free(&over_tcp);
        hx_response_free(&over_unix);
    }
}

/* A redirect hop to the listener is vetted like the first hop. */
Test(tcp_tokens, redirect_to_the_listener_is_refused)
{
    start_with_token();
    char target[128], path[256], url[512];
    pol_fmt(target, sizeof target, "http://127.0.0.1:%d/v1/health", broker.tcp_port);
    pol_fmt(path, sizeof path, "/redirect?to=%s", target);
    hx_response r = pol_lookup(&broker, hx_origin_url(&origin, false, path, url, sizeof url), NULL);
    hx_receipt_expect e = {
        .ok = false, .url = url, .max_attempts = -1, .providers_available = 1,
        .failure_reason = "all_providers_failed", .n_attempts = 1,
        .attempts = { { .provider = "direct", .outcome = "transport_error", .http_status = HX_ANY,
                        .detail_all = { "(rule broker_self)" } } },
    };
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

/* Unix callers are who SO_PEERCRED says: a bearer token there changes nothing. */
Test(tcp_tokens, token_on_the_unix_socket_does_not_switch_tenant)
{
    start_with_token();
    char auth[128], url[256], body[512];
    pol_fmt(auth, sizeof auth, "Bearer %s", token);
    pol_fmt(body, sizeof body, "{\"url\": \"%s\"}", hx_origin_url(&origin, false, "/page", url, sizeof url));
    pol_req q = { .authorization = auth, .method = "POST", .path = "/v1/lookup", .body = body };
    hx_response r = pol_http(&broker, &q, NULL, 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(pol_receipt_str(&r, "tenant"), "local", "body: %s", r.body);
    hx_response_free(&r);
}

Test(tcp_tokens, metrics_over_tcp_show_only_the_token_tenant)
{
    start_with_token();
    char url[256];
    hx_response local = pol_lookup(&broker, hx_origin_url(&origin, false, "/page", url, sizeof url), NULL);
    cr_assert_eq(local.status, 200);
    hx_response_free(&local);
    char auth[128];
    pol_fmt(auth, sizeof auth, "Bearer %s", token);
    hx_response m = tcp_call(auth, "GET", "/metrics", NULL);
    cr_assert_eq(m.status, 200, "%s", m.body);
    cr_assert(strstr(m.body, "tenant=\"remote\""), "%s", m.body);
    cr_assert_null(strstr(m.body, "tenant=\"local\""), "the token tenant sees the unix tenant:\n%s", m.body);
    cr_assert_eq(pol_metric(m.body, "verifetch_lookups_total{tenant=\"remote\",status=\"success\"}"), 0);
    hx_response_free(&m);
}

/* A reloaded policy must know the listener's real (kernel-picked) port too. */
Test(tcp_tokens, listener_stays_refused_after_reload)
{
    start_with_token();
    cr_assert(pol_reload(&broker, &opts, NULL), "reload rejected: %s", hx_broker_log(&broker.hx));
    char url[128];
    pol_fmt(url, sizeof url, "http://127.0.0.1:%d/v1/health", broker.tcp_port);
    hx_response r = pol_lookup(&broker, url, NULL);
    hx_receipt_expect e = {
        .ok = false, .url = url, .max_attempts = -1, .providers_available = 1,
        .failure_reason = "all_providers_failed", .n_attempts = 1,
        .attempts = { { .provider = "direct", .outcome = "transport_error", .http_status = HX_NULL,
                        .detail_all = { "egress denied", "(rule broker_self)" } } },
    };
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
    char auth[128];
    pol_fmt(auth, sizeof auth, "Bearer %s", token);
    hx_response h = tcp_call(auth, "GET", "/v1/health", NULL);
    cr_assert_eq(h.status, 200, "token refused after reload: %ld %s", h.status, h.body);
    hx_response_free(&h);
}

/* Dropping a token from the file and reloading revokes it at once. */
Test(tcp_tokens, reload_revokes_a_token)
{
    start_with_token();
    char auth[128];
    pol_fmt(auth, sizeof auth, "Bearer %s", token);
    hx_response before = tcp_call(auth, "GET", "/v1/health", NULL);
    cr_assert_eq(before.status, 200);
    hx_response_free(&before);
    char other[65], text[1024];
    pol_sha256_hex("a-different-token", other);
    pol_fmt(text, sizeof text,
            "{ name = \"local\"; uids = [ 0 ]; " POL_EGRESS_LOOPBACK " },\n"
            "{ name = \"remote\"; tokens = [ \"sha256:%s\" ]; " POL_EGRESS_LOOPBACK " }", other);
    opts.tenants = text;
    cr_assert(pol_reload(&broker, &opts, NULL), "reload rejected: %s", hx_broker_log(&broker.hx));
    hx_response after = tcp_call(auth, "GET", "/v1/health", NULL);
    cr_assert_eq(after.status, 403, "revoked token still served: %ld %s", after.status, after.body);
    hx_response_free(&after);
    hx_response fresh = tcp_call("Bearer a-different-token", "GET", "/v1/health", NULL);
    cr_assert_eq(fresh.status, 200, "new token refused: %ld %s", fresh.status, fresh.body);
    hx_response_free(&fresh);
}

static int tcp_connect(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)broker.tcp_port) };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "connect: %s", strerror(errno));
    return fd;
}

/* Authentication before resources: a TCP caller without a valid token is
 * refused as soon as its head is in, without the broker waiting for (or
 * buffering) the body it announced. */
Test(tcp_tokens, no_token_is_refused_before_the_body)
{
    start_with_token();
    int fd = tcp_connect();
    static const char head[] = "POST /v1/lookup HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                               "Content-Length: 60000\r\n\r\n";
    cr_assert_eq(send(fd, head, sizeof head - 1, MSG_NOSIGNAL), (ssize_t)(sizeof head - 1));
    struct pollfd p = { .fd = fd, .events = POLLIN };
    double t0 = hx_now_ms();
    char got[256] = "";
    ssize_t n = poll(&p, 1, 3000) == 1 ? recv(fd, got, sizeof got - 1, 0) : -1;
    double took = hx_now_ms() - t0;
    close(fd);
    cr_assert_gt(n, 0, "no answer within 3 s to a tokenless head (the broker waits for the body)");
    got[n] = '\0';
    cr_assert(strncmp(got, "HTTP/1.1 403", 12) == 0, "answer: %.60s", got);
    cr_log_info("tokenless head refused in %.1f ms", took);
}

typedef struct {
    char auth[128];
    char body[512];
    hx_response r;
} slow_call;

static void *run_slow(void *arg)
{
    slow_call *c = arg;
    c->r = tcp_call(c->auth, "POST", "/v1/lookup", c->body);
    return NULL;
}

/* SIGTERM stops accepting; a client arriving on TCP while in-flight work
 * drains gets 503 with Retry-After, not a reset or a hang. */
Test(tcp_tokens, sigterm_answers_late_tcp_clients_with_503)
{
    start_with_token();
    static slow_call c;
    char url[256];
    pol_fmt(c.auth, sizeof c.auth, "Bearer %s", token);
    pol_fmt(c.body, sizeof c.body, "{\"url\": \"%s\"}", hx_origin_url(&origin, false, "/slow?ms=2500", url, sizeof url));
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, run_slow, &c), 0);
    pol_sleep_ms(500);
    cr_assert_eq(kill(broker.hx.pid, SIGTERM), 0);
    pol_sleep_ms(200);
    char retry[16];
    pol_req q = { .tcp = true, .authorization = c.auth, .method = "GET", .path = "/v1/health" };
    hx_response late = pol_http(&broker, &q, retry, sizeof retry);
    pthread_join(t, NULL);
    cr_assert_eq(late.status, 503, "a client arriving during the drain: HTTP %ld (curl %d)", late.status,
                 late.curl_code);
    cr_assert(retry[0], "503 without Retry-After");
    cr_assert_eq(c.r.status, 200, "the in-flight lookup: HTTP %ld (curl %d)", c.r.status, c.r.curl_code);
    hx_response_free(&late);
    hx_response_free(&c.r);
}
