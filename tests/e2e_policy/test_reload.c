/* E2E: SIGHUP reload. A valid new config changes the provider order for the
 * next lookup, an invalid one is rejected and the old policy keeps serving,
 * and a lookup in flight during a reload finishes on the snapshot it took. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "pol.h"

TestSuite(reload, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static hx_origin origin;
static pol_broker broker;
static pol_broker_opts opts;

#define TENANT(first, second) \
    "{ name = \"rl\"; uids = [ 0 ]; " POL_EGRESS_LOOPBACK \
    "  providers = ( { name = \"" first "\"; kind = \"direct\"; }, { name = \"" second "\"; kind = \"direct\"; } ); }"

static void start(void)
{
    hx_origin_start(&origin, NULL, NULL);
    opts = (pol_broker_opts){ .tenants = TENANT("p1", "p2") };
    pol_broker_start(&broker, &opts);
}

static hx_response lookup(const char *path)
{
    char url[256];
    return pol_lookup(&broker, hx_origin_url(&origin, false, path, url, sizeof url), NULL);
}

static void expect_order(const char *order)
{
    char got[64];
    hx_response r = lookup("/500");
    hx_receipt_expect e = {
        .ok = false, .max_attempts = -1, .providers_available = 2,
        .failure_reason = "all_providers_failed", .n_attempts = 2,
        .attempts = { { .outcome = "http_error", .http_status = 500 },
                      { .outcome = "http_error", .http_status = 500 } },
    };
    free(hx_check_tool_result(&r, &e));
    cr_assert_str_eq(pol_order(&r, got, sizeof got), order, "order; stderr: %s", hx_broker_log(&broker.hx));
    hx_response_free(&r);
}

static void expect_served_by(const hx_response *r, const char *provider)
{
    hx_receipt_expect e = {
        .ok = true, .max_attempts = -1, .providers_available = 2, .n_attempts = 1,
        .attempts = { { .provider = provider, .outcome = "ok", .http_status = 200 } },
    };
    free(hx_check_tool_result(r, &e));
}

Test(reload, valid_reload_changes_the_order)
{
    start();
    expect_order("p1,p2");
    opts.tenants = TENANT("p2", "p1");
    cr_assert(pol_reload(&broker, &opts, NULL), "valid config rejected: %s", hx_broker_log(&broker.hx));
    expect_order("p2,p1");
}

Test(reload, invalid_config_is_rejected_and_the_old_one_serves)
{
    start();
    expect_order("p1,p2");
    static const char *const broken[] = {
        "tenants = ( { name = \"rl\"; uids = [ 0 ]; providers = ( { name = \"p1\"; kind = \"teleport\"; } ); } );\n",
        "tenants = ( { name = \"rl\"; uids = [ 0 ]; \n",   /* syntax error */
        "no_such_setting = 1;\n",
    };
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
        cr_assert_not(pol_reload(&broker, &opts, broken[i]), "broken config %zu accepted", i);
        cr_assert(strstr(hx_broker_log(&broker.hx), broker.hx.config_path),
                  "the rejection should name the file: %s", hx_broker_log(&broker.hx));
        expect_order("p1,p2");
        hx_response ok = lookup("/page");
        expect_served_by(&ok, "p1");
        hx_response_free(&ok);
    }
    /* A good file afterwards is taken again. */
    opts.tenants = TENANT("p2", "p1");
    cr_assert(pol_reload(&broker, &opts, NULL));
    expect_order("p2,p1");
}

typedef struct {
    hx_response r;
} call;

static void *slow_lookup(void *arg)
{
    call *c = arg;
    char url[256], body[512];
    pol_fmt(body, sizeof body, "{\"url\": \"%s\"}",
            hx_origin_url(&origin, false, "/slow?ms=1500", url, sizeof url));
    pol_req q = { .method = "POST", .path = "/v1/lookup", .body = body };
    c->r = pol_http(&broker, &q, NULL, 0);
    return NULL;
}

Test(reload, lookup_in_flight_survives_a_reload)
{
    start();
    call slow;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, slow_lookup, &slow), 0);
    bool in_flight = pol_origin_saw(&origin, "REQ GET /slow", 5000);
    bool reloaded = false;
    if (in_flight) {
        opts.tenants = TENANT("p2", "p1");
        reloaded = pol_reload(&broker, &opts, NULL);
    }
    pthread_join(th, NULL);
    cr_assert(in_flight, "the slow lookup never reached the origin");
    cr_assert(reloaded, "reload rejected: %s", hx_broker_log(&broker.hx));
    /* Started under the old order, so p1 served it; the answer is whole. */
    expect_served_by(&slow.r, "p1");
    hx_response_free(&slow.r);
    expect_order("p2,p1");
}

/* A setting that only applies at start-up is not silently ignored: the
 * reload says which one needs a restart, keeps the running value, and the
 * rest of the new config applies. */
Test(reload, restart_only_settings_are_named_and_kept)
{
    start();
    expect_order("p1,p2");
    opts.tenants = TENANT("p2", "p1");
    opts.world_socket = true;   /* listen.mode 0600 -> 0666 */
    cr_assert(pol_reload(&broker, &opts, NULL), "reload rejected: %s", hx_broker_log(&broker.hx));
    const char *log = hx_broker_log(&broker.hx);
    cr_assert(strstr(log, "listen.mode") && strstr(log, "restart"),
              "the reload did not name listen.mode as needing a restart:\n%s", log);
    struct stat st;
    cr_assert_eq(stat(broker.hx.socket_path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "the socket's mode changed to 0%o on reload", st.st_mode & 0777);
    expect_order("p2,p1");   /* the rest applied */
}
