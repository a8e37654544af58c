/* E2E: the client API surface of verifetchd — health, tool spec, routing,
 * and strict validation of lookup requests (400 naming the field). */
#include "test_common.h"

#include <criterion/parameterized.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

TestSuite(api, .init = hx_setup, .fini = hx_teardown, .timeout = 30);

static hx_broker broker;

static void start_broker(void)
{
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    hx_broker_start(&broker, &o);
}

Test(api, health_reports_ok)
{
    start_broker();
    hx_response r = hx_request(&broker, "GET", "/v1/health", NULL, 0);
    cr_assert_eq(r.status, 200, "body: %s", r.body);
    cr_assert(json_is_object(r.json), "health body is not JSON: %s", r.body);
    cr_assert_str_eq(json_string_value(json_object_get(r.json, "status")), "ok");
    cr_assert(hx_contains_ci(r.content_type, "application/json"), "content type '%s'",
              r.content_type);
    hx_response_free(&r);
}

/* First "properties" object found breadth-first: the input schema's. */
static json_t *find_properties(json_t *root)
{
    json_t *queue[256];
    size_t head = 0, tail = 0;
    queue[tail++] = root;
    while (head < tail) {
        json_t *v = queue[head++];
        const char *key;
        json_t *child;
        size_t i;
        if (json_is_object(v)) {
            json_t *props = json_object_get(v, "properties");
            if (json_is_object(props))
                return props;
            json_object_foreach(v, key, child) if (tail < 256) queue[tail++] = child;
        } else if (json_is_array(v)) {
            json_array_foreach(v, i, child) if (tail < 256) queue[tail++] = child;
        }
    }
    return NULL;
}

Test(api, tool_spec_exposes_only_model_facing_inputs)
{
    start_broker();
    hx_response r = hx_request(&broker, "GET", "/v1/tool-spec", NULL, 0);
    cr_assert_eq(r.status, 200, "body: %s", r.body);
    cr_assert(json_is_object(r.json), "tool-spec is not JSON: %s", r.body);
    json_t *props = find_properties(r.json);
    cr_assert_not_null(props, "no input schema properties in %s", r.body);
    static const char *const want[] = { "url", "must_contain", "must_contain_mode", "min_chars", "max_attempts",
                                         "format", "max_chars", "start_index" };
    cr_assert_eq(json_object_size(props), 8, "properties must be exactly the 8 inputs: %s", r.body);
    for (size_t i = 0; i < 8; i++)
        cr_assert_not_null(json_object_get(props, want[i]), "property '%s' missing: %s", want[i],
                           r.body);
    /* Nothing about transport may leak into what the model sees. */
    cr_assert(!hx_contains_ci(r.body, "timeout_ms") && !hx_contains_ci(r.body, "credential") &&
                  !hx_contains_ci(r.body, "key_file"),
              "tool spec mentions transport settings: %s", r.body);
    hx_response_free(&r);
}

Test(api, unknown_path_is_404_json)
{
    start_broker();
    hx_response r = hx_request(&broker, "GET", "/v1/nope", NULL, 0);
    cr_assert_eq(r.status, 404, "body: %s", r.body);
    cr_assert(json_is_object(r.json), "404 body is not JSON: %s", r.body);
    hx_response_free(&r);
}

Test(api, wrong_method_is_405_json)
{
    start_broker();
    hx_response r = hx_request(&broker, "GET", "/v1/lookup", NULL, 0);
    cr_assert_eq(r.status, 405, "GET /v1/lookup: body: %s", r.body);
    cr_assert(json_is_object(r.json), "405 body is not JSON: %s", r.body);
    hx_response_free(&r);
    r = hx_request(&broker, "DELETE", "/v1/health", NULL, 0);
    cr_assert_eq(r.status, 405, "DELETE /v1/health: body: %s", r.body);
    cr_assert(json_is_object(r.json), "405 body is not JSON: %s", r.body);
    hx_response_free(&r);
}

typedef struct {
    const char *body;
    const char *field;   /* expected error.field; NULL = any string */
} bad_case;

static const bad_case bad_cases[] = {
    { "this is not json", "" },
    { "", "" },
    { "{\"url\": \"http://127.0.0.1/\"} trailing", "" },
    { "[\"http://127.0.0.1/\"]", NULL },
    { "\"http://127.0.0.1/\"", NULL },
    { "{}", "url" },
    { "{\"url\": 5}", "url" },
    { "{\"url\": null}", "url" },
    { "{\"url\": [\"http://127.0.0.1/\"]}", "url" },
    { "{\"url\": \"file:///etc/passwd\"}", "url" },
    { "{\"url\": \"ftp://x\"}", "url" },
    { "{\"url\": \"javascript:alert(1)\"}", "url" },
    { "{\"url\": \"\"}", "url" },
    { "{\"url\": \"http://127.0.0.1/\", \"must_contain\": 5}", "must_contain" },
    { "{\"url\": \"http://127.0.0.1/\", \"must_contain\": [\"a\"]}", "must_contain" },
    { "{\"url\": \"http://127.0.0.1/\", \"min_chars\": -1}", "min_chars" },
    { "{\"url\": \"http://127.0.0.1/\", \"min_chars\": 1.5}", "min_chars" },
    { "{\"url\": \"http://127.0.0.1/\", \"min_chars\": \"40\"}", "min_chars" },
    { "{\"url\": \"http://127.0.0.1/\", \"max_attempts\": \"3\"}", "max_attempts" },
    { "{\"url\": \"http://127.0.0.1/\", \"max_attempts\": 2.5}", "max_attempts" },
    { "{\"url\": \"http://127.0.0.1/\", \"max_attempts\": true}", "max_attempts" },
    { "{\"url\": \"http://127.0.0.1/\", \"provider\": \"fetcher\"}", "provider" },
    { "{\"url\": \"http://127.0.0.1/\", \"timeout_ms\": 1}", "timeout_ms" },
    /* Issue 13 item 15: a long unknown name ending in a two-byte character
     * was cut mid-character and answered 500 "broker out of memory". */
    { "{\"url\": \"http://127.0.0.1/\", \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u00e9\": 1}",
      NULL },
    { "{\"url\": \"http://127.0.0.1/\", \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9\": 1}",
      NULL },
};
#define N_BAD (sizeof bad_cases / sizeof bad_cases[0])

ParameterizedTestParameters(api, bad_input_is_400_naming_the_field)
{
    static int idx[N_BAD];
    for (size_t i = 0; i < N_BAD; i++)
        idx[i] = (int)i;
    return cr_make_param_array(int, idx, N_BAD);
}

ParameterizedTest(int *i, api, bad_input_is_400_naming_the_field)
{
    const bad_case *c = &bad_cases[*i];
    start_broker();
    hx_response r = hx_request(&broker, "POST", "/v1/lookup", c->body, strlen(c->body));
    cr_assert_eq(r.status, 400, "body <%s>: HTTP %ld, answer %s", c->body, r.status, r.body);
    cr_assert(json_is_object(r.json), "body <%s>: error is not JSON: %s", c->body, r.body);
    json_t *err = json_object_get(r.json, "error");
    cr_assert(json_is_object(err), "body <%s>: no error object: %s", c->body, r.body);
    const char *field = json_string_value(json_object_get(err, "field"));
    const char *msg = json_string_value(json_object_get(err, "message"));
    cr_assert_not_null(field, "body <%s>: error.field missing: %s", c->body, r.body);
    cr_assert(msg && msg[0], "body <%s>: error.message missing/empty: %s", c->body, r.body);
    if (c->field)
        cr_assert_str_eq(field, c->field, "body <%s>: answer %s", c->body, r.body);
    hx_response_free(&r);
    tc_assert_healthy(&broker);
}

Test(api, oversized_body_is_rejected)
{
    start_broker();
    size_t n = 70 * 1024;
    char *body = malloc(n + 64);
    int head = snprintf(body, n + 64, "{\"url\": \"http://127.0.0.1/\", \"must_contain\": \"");
    memset(body + head, 'a', n);
    strcpy(body + head + n, "\"}");
    hx_response r = hx_request(&broker, "POST", "/v1/lookup", body, strlen(body));
    free(body);
    cr_assert(r.status == 413 || r.status == 400, "70 KiB body: HTTP %ld (curl %d), answer %.200s",
              r.status, r.curl_code, r.body);
    cr_assert(json_is_object(json_object_get(r.json, "error")), "error is not JSON: %.200s", r.body);
    hx_response_free(&r);
    tc_assert_healthy(&broker);
}

/* Sends a raw request head over the broker's socket; returns the status
 * code of the first answer line, 0 when there was none. */
static int raw_status(const hx_broker *b, const char *request)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    cr_assert(strlen(b->socket_path) < sizeof sa.sun_path);
    memcpy(sa.sun_path, b->socket_path, strlen(b->socket_path) + 1);
    cr_assert(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    struct timeval tv = { .tv_sec = 10 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    cr_assert_eq(write(fd, request, strlen(request)), (ssize_t)strlen(request));
    char answer[256] = "";
    ssize_t n = read(fd, answer, sizeof answer - 1);
    close(fd);
    int status = 0;
    if (n > 0)
        sscanf(answer, "HTTP/1.%*d %d", &status);
    return status;
}

/* Issue 13 item 15: a head that frames its body two ways (two
 * Content-Lengths, or Content-Length beside chunking) is refused, not read
 * with whichever value libmicrohttpd happens to take. */
Test(api, ambiguous_body_framing_is_400)
{
    start_broker();
    static const char *heads[] = {
        "GET /v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 30\r\n\r\n",
        "GET /v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\ncontent-length: 0\r\n\r\n",
        "GET /v1/health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
        "0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        cr_assert_eq(raw_status(&broker, heads[i]), 400, "head %zu was not refused", i);
    /* the same request framed once is answered */
    cr_assert_eq(raw_status(&broker, "GET /v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"), 200);
    tc_assert_healthy(&broker);
}

Test(api, sigterm_stops_cleanly_and_removes_socket)
{
    start_broker();
    tc_assert_healthy(&broker);
    hx_broker_stop_checked(&broker, NULL, 0);
}
