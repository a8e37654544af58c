#include "cli/mcp_stdio.h"

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "broker/mcp/mcp_protocol.h"
#include "cli/broker_client.h"

#define MAX_LINE       (1024u * 1024u)   /* one JSON-RPC message */
#define MAX_IN_FLIGHT  32u               /* tools/call running at once */

/* One tools/call running on its own thread, so the reader stays free to see
 * notifications/cancelled for it. */
typedef struct {
    json_t *message;         /* the request (owned) */
    json_t *id;              /* borrowed from message */
    atomic_bool cancel;
    bool used;
    pthread_t thread;
} call_slot;

static struct {
    const char *socket_path;
    pthread_mutex_t lock;    /* guards slots and stdout */
    pthread_cond_t freed;
    call_slot slots[MAX_IN_FLIGHT];
} io = { .lock = PTHREAD_MUTEX_INITIALIZER, .freed = PTHREAD_COND_INITIALIZER };

/* One message per line; compact JSON never holds a raw newline. */
static void emit_locked(json_t *msg)
{
    if (!msg)
        return;
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        free(text);
    }
}

static void emit(json_t *msg)
{
    pthread_mutex_lock(&io.lock);
    emit_locked(msg);
    pthread_mutex_unlock(&io.lock);
}

static void set_err(vf_mcp_error *err, int code, const char *field, const char *message)
{
    memset(err, 0, sizeof *err);
    err->code = code;
    snprintf(err->field, sizeof err->field, "%.*s", (int)sizeof err->field - 1, field);
    snprintf(err->message, sizeof err->message, "%.*s", (int)sizeof err->message - 1, message);
}

/* A non-200 answer from verifetchd, as a JSON-RPC error. */
static void refusal(const vf_cli_response *r, vf_mcp_error *err)
{
    json_t *doc = json_loadb(r->body ? r->body : "", r->len, 0, NULL);
    json_t *e = json_object_get(doc, "error");
    const char *field = json_string_value(json_object_get(e, "field"));
    const char *message = json_string_value(json_object_get(e, "message"));
    char text[256];
    snprintf(text, sizeof text, "verifetchd answered HTTP %ld: %s", r->http, message ? message : "no message");
    if (r->http == 400)
        set_err(err, VF_JSONRPC_INVALID_PARAMS, field ? field : "", message ? message : text);
    else if (r->http == 429) {
        set_err(err, VF_MCP_THROTTLED, "", message ? message : text);
        json_t *retry = json_object_get(e, "retry_after");
        err->retry_after = json_is_integer(retry) ? (unsigned)json_integer_value(retry) : 1;
    } else
        set_err(err, VF_MCP_BROKER_UNREACHABLE, "", text);
    json_decref(doc);
}

typedef struct {
    const atomic_bool *cancel;
    bool cancelled;
} call_ctx;

static json_t *forward_lookup(void *ctx, const json_t *arguments, vf_mcp_error *err)
{
    call_ctx *cc = ctx;
    char *body = json_dumps(arguments, JSON_COMPACT);
    if (!body) {
        set_err(err, VF_JSONRPC_INTERNAL_ERROR, "", "out of memory");
        return NULL;
    }
    vf_cli_response r;
    int rc = vf_cli_request(io.socket_path, "/v1/lookup", body, cc ? cc->cancel : NULL, &r);
    free(body);
    json_t *out = NULL;
    if (rc != 0) {
        cc->cancelled = r.cancelled;
        set_err(err, VF_MCP_BROKER_UNREACHABLE, "", r.error);
    } else if (r.http != 200) {
        refusal(&r, err);
    } else if (!(out = json_loadb(r.body ? r.body : "", r.len, 0, NULL))) {
        set_err(err, VF_JSONRPC_INTERNAL_ERROR, "", "verifetchd answered with invalid JSON");
    }
    vf_cli_response_free(&r);
    return out;
}

static json_t *forward_spec(void *ctx, vf_mcp_error *err)
{
    (void)ctx;
    vf_cli_response r;
    json_t *out = NULL;
    if (vf_cli_request(io.socket_path, "/v1/tool-spec", NULL, NULL, &r) != 0)
        set_err(err, VF_MCP_BROKER_UNREACHABLE, "", r.error);
    else if (r.http != 200)
        refusal(&r, err);
    else if (!(out = json_loadb(r.body ? r.body : "", r.len, 0, NULL)))
        set_err(err, VF_JSONRPC_INTERNAL_ERROR, "", "verifetchd answered with invalid JSON");
    vf_cli_response_free(&r);
    return out;
}

static vf_mcp_backend backend(call_ctx *cc)
{
    return (vf_mcp_backend){ .lookup = forward_lookup, .tool_spec = forward_spec, .ctx = cc,
                             .server_version = VERIFETCH_VERSION };
}

static void *run_call(void *arg)
{
    call_slot *slot = arg;
    call_ctx cc = { .cancel = &slot->cancel };
    const json_t *token = vf_mcp_progress_token(slot->message);
    if (token)
        emit(vf_mcp_progress(token, 0, 1, "looking up through verifetchd"));
    vf_mcp_backend be = backend(&cc);
    json_t *answer = vf_mcp_handle(&be, slot->message);
    pthread_mutex_lock(&io.lock);
    /* A cancelled request gets no response (the client has moved on). */
    if (atomic_load(&slot->cancel))
        json_decref(answer);
    else
        emit_locked(answer);
    json_decref(slot->message);
    slot->message = NULL;
    slot->used = false;
    pthread_cond_broadcast(&io.freed);
    pthread_mutex_unlock(&io.lock);
    return NULL;
}

static void start_call(json_t *message)
{
    pthread_mutex_lock(&io.lock);
    call_slot *slot = NULL;
    for (size_t i = 0; i < MAX_IN_FLIGHT && !slot; i++)
        if (!io.slots[i].used)
            slot = &io.slots[i];
    if (!slot) {
        vf_mcp_error err;
        set_err(&err, VF_MCP_THROTTLED, "", "too many tool calls in flight on this connection");
        err.retry_after = 1;
        emit_locked(vf_mcp_error_response(json_object_get(message, "id"), &err));
        pthread_mutex_unlock(&io.lock);
        json_decref(message);
        return;
    }
    slot->used = true;
    slot->message = message;
    slot->id = json_object_get(message, "id");
    atomic_store(&slot->cancel, false);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    if (pthread_create(&slot->thread, &attr, run_call, slot) != 0) {
        vf_mcp_error err;
        set_err(&err, VF_JSONRPC_INTERNAL_ERROR, "", "cannot start a thread for this call");
        emit_locked(vf_mcp_error_response(slot->id, &err));
        slot->used = false;
        slot->message = NULL;
        json_decref(message);
    }
    pthread_attr_destroy(&attr);
    pthread_mutex_unlock(&io.lock);
}

static void cancel_call(const json_t *id)
{
    pthread_mutex_lock(&io.lock);
    for (size_t i = 0; i < MAX_IN_FLIGHT; i++)
        if (io.slots[i].used && (!id || json_equal(io.slots[i].id, (json_t *)id)))
            atomic_store(&io.slots[i].cancel, true);
    pthread_mutex_unlock(&io.lock);
}

static void wait_for_calls(void)
{
    pthread_mutex_lock(&io.lock);
    for (;;) {
        bool busy = false;
        for (size_t i = 0; i < MAX_IN_FLIGHT; i++)
            busy = busy || io.slots[i].used;
        if (!busy)
            break;
        pthread_cond_wait(&io.freed, &io.lock);
    }
    pthread_mutex_unlock(&io.lock);
}

static void dispatch(const char *line, size_t len)
{
    json_error_t jerr;
    json_t *m = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!m) {
        vf_mcp_error err;
        set_err(&err, VF_JSONRPC_PARSE_ERROR, "", "message is not valid JSON");
        emit(vf_mcp_error_response(NULL, &err));
        return;
    }
    const json_t *cancelled = vf_mcp_cancelled_id(m);
    const char *method = vf_mcp_method(m);
    if (cancelled) {
        cancel_call(cancelled);
        json_decref(m);
    } else if (vf_mcp_kind(m) == VF_MCP_MSG_REQUEST && strcmp(method, "tools/call") == 0) {
        start_call(m);
    } else {
        call_ctx cc = { 0 };
        vf_mcp_backend be = backend(&cc);
        emit(vf_mcp_handle(&be, m));
        json_decref(m);
    }
}

/* One line of at most max bytes into buf; a longer line is consumed and
 * flagged, never buffered. -1 at end of input. */
static ssize_t read_line(char *buf, size_t max, bool *too_long)
{
    size_t n = 0;
    int ch;
    *too_long = false;
    while ((ch = getc_unlocked(stdin)) != EOF) {
        if (ch == '\n')
            return (ssize_t)n;
        if (n < max)
            buf[n++] = (char)ch;
        else
            *too_long = true;
    }
    return n > 0 || *too_long ? (ssize_t)n : -1;
}

static int usage(FILE *to, int code)
{
    fprintf(to, "usage: verifetch mcp [--socket PATH]\n"
                "Speaks MCP (JSON-RPC, one message per line) on stdin/stdout and forwards each\n"
                "tools/call to verifetchd. Socket: --socket, else $VERIFETCH_SOCKET, else the default.\n");
    return code;
}

int vf_cli_mcp_main(int argc, char **argv)
{
    const char *flag = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc)
            flag = argv[++i];
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(stdout, 0);
        else {
            fprintf(stderr, "verifetch mcp: unexpected argument '%s'\n", argv[i]);
            return usage(stderr, 2);
        }
    }
    char *socket_path = vf_cli_socket_path(flag);
    if (!socket_path) {
        fprintf(stderr, "verifetch mcp: out of memory\n");
        return 2;
    }
    io.socket_path = socket_path;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    char *line = malloc(MAX_LINE + 1);
    bool too_long = false;
    ssize_t n;
    while (line && (n = read_line(line, MAX_LINE, &too_long)) >= 0) {
        if (too_long) {
            vf_mcp_error err;
            set_err(&err, VF_JSONRPC_INVALID_REQUEST, "", "message is larger than 1 MiB");
            emit(vf_mcp_error_response(NULL, &err));
            continue;
        }
        while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
            n--;
        if (n > 0)
            dispatch(line, (size_t)n);
    }
    /* stdin closed: answer what is in flight (each call is bounded by the
     * broker's deadlines), then leave. */
    wait_for_calls();
    free(line);
    curl_global_cleanup();
    free(socket_path);
    return 0;
}
