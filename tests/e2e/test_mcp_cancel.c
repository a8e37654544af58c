/* E2E: MCP over HTTP. A tools/call in flight on one /mcp POST is stopped by a
 * notifications/cancelled for its id on another: the lookup's token fires,
 * its worker is killed and the call answers at once instead of at the
 * attempt deadline. A cancellation naming another id stops nothing. */
#include <pthread.h>
#include <unistd.h>

#include "test_common.h"

TestSuite(mcp_cancel, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static tc_env t;

typedef struct {
    const char *body;
    hx_response r;
    double ms;
} call_arg;

static void *call(void *p)
{
    call_arg *a = p;
    double start = hx_now_ms();
    a->r = hx_request(&t.broker, "POST", "/mcp", a->body, strlen(a->body));
    a->ms = hx_now_ms() - start;
    return NULL;
}

/* tools/call id 7 for /hang, which never answers, in a thread of its own. */
static void start_hanging_call(pthread_t *th, call_arg *a, char *body, size_t len)
{
    snprintf(body, len,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"verified_web_lookup\","
             "\"arguments\":{\"url\":\"%s\"}}}",
             tc_url(&t, "/hang"));
    a->body = body;
    cr_assert_eq(pthread_create(th, NULL, call, a), 0);
    usleep(600 * 1000);   /* the lookup is now waiting on the origin */
}

static void cancel(const char *id_json)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%s,"
             "\"reason\":\"user gave up\"}}",
             id_json);
    hx_response r = hx_request(&t.broker, "POST", "/mcp", body, strlen(body));
    cr_assert_eq(r.status, 202, "a notification is accepted with 202: %ld %s", r.status, r.body);
    hx_response_free(&r);
}

Test(mcp_cancel, notification_stops_the_call_in_flight)
{
    tc_start(&t, NULL);   /* attempt timeout 5 s */
    pthread_t th;
    call_arg a = { 0 };
    char body[512];
    start_hanging_call(&th, &a, body, sizeof body);
    double fired = hx_now_ms();
    cancel("7");
    pthread_join(th, NULL);
    double after_cancel = hx_now_ms() - fired;
    cr_assert_lt(after_cancel, 1500.0, "the call went on %.0f ms after its cancellation", after_cancel);
    cr_assert_eq(a.r.status, 200, "%s", a.r.body);
    json_t *result = json_object_get(a.r.json, "result");
    cr_assert(json_is_true(json_object_get(result, "isError")), "a cancelled lookup is no success: %s", a.r.body);
    json_t *attempt = json_array_get(json_object_get(json_object_get(result, "structuredContent"), "attempts_log"), 0);
    const char *detail = json_string_value(json_object_get(attempt, "detail"));
    cr_assert(detail && strstr(detail, "cancel"), "the attempt says it was cancelled: %s", a.r.body);
    hx_response_free(&a.r);
    tc_assert_healthy(&t.broker);
}

Test(mcp_cancel, another_id_or_spelling_cancels_nothing)
{
    tc_start(&t, NULL);
    pthread_t th;
    call_arg a = { 0 };
    char body[512];
    start_hanging_call(&th, &a, body, sizeof body);
    cancel("8");
    cancel("\"7\"");   /* the string "7" is another request than the number 7 */
    pthread_join(th, NULL);
    cr_assert_geq(a.ms, 4500.0, "the call ended after %.0f ms: something cancelled it", a.ms);
    hx_response_free(&a.r);
}
