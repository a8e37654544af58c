/* verifetch: command-line client for a running verifetchd.
 * Exit codes: 0 lookup succeeded, 1 lookup reported an error, 2 usage or
 * connection problem. */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/broker_client.h"
#include "cli/mcp_stdio.h"
#include "cli/terminal_text.h"

typedef enum { VIEW_FULL, VIEW_TEXT, VIEW_RECEIPT } view_mode;

typedef struct {
    const char *url;
    const char *must_contain;
    long min_chars;          /* -1 = broker default */
    long max_attempts;       /* -1 = broker default */
    const char *socket_path;
    view_mode view;
} cli_args;

static void usage(FILE *to)
{
    fprintf(to, "usage: verifetch lookup URL [--must-contain TEXT] [--min-chars N] [--max-attempts N]\n"
                "                            [--socket PATH] [--text | --receipt]\n"
                "       verifetch mcp [--socket PATH]     (MCP server on stdin/stdout)\n"
                "       verifetch --version\n"
                "The socket is --socket, else $VERIFETCH_SOCKET, else verifetchd's default path.\n");
}

static int parse_count(const char *flag, const char *s, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || !end || *end || end == s || v < 0 || v > INT_MAX) {
        fprintf(stderr, "verifetch: %s needs a non-negative integer, got '%s'\n", flag, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->min_chars = -1;
    a->max_attempts = -1;
    if (argc < 2 || strcmp(argv[1], "lookup") != 0) {
        if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
            usage(stdout);
            exit(0);
        }
        fprintf(stderr, "verifetch: expected the 'lookup' or 'mcp' command\n");
        return -1;
    }
    for (int i = 2; i < argc; i++) {
        const char *f = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(f, "--text") == 0)
            a->view = VIEW_TEXT;
        else if (strcmp(f, "--receipt") == 0)
            a->view = VIEW_RECEIPT;
        else if (strcmp(f, "--must-contain") == 0 && v)
            a->must_contain = argv[++i];
        else if (strcmp(f, "--socket") == 0 && v)
            a->socket_path = argv[++i];
        else if (strcmp(f, "--min-chars") == 0 && v) {
            if (parse_count(f, argv[++i], &a->min_chars) != 0)
                return -1;
        } else if (strcmp(f, "--max-attempts") == 0 && v) {
            if (parse_count(f, argv[++i], &a->max_attempts) != 0)
                return -1;
        } else if (f[0] == '-' && f[1] == '-') {
            fprintf(stderr, "verifetch: unknown option or missing value: %s\n", f);
            return -1;
        } else if (!a->url)
            a->url = f;
        else {
            fprintf(stderr, "verifetch: unexpected argument '%s'\n", f);
            return -1;
        }
    }
    if (!a->url) {
        fprintf(stderr, "verifetch: lookup needs a URL\n");
        return -1;
    }
    return 0;
}

static char *request_body(const cli_args *a)
{
    json_t *req = json_pack("{s:s}", "url", a->url);
    if (a->must_contain)
        json_object_set_new(req, "must_contain", json_string(a->must_contain));
    if (a->min_chars >= 0)
        json_object_set_new(req, "min_chars", json_integer(a->min_chars));
    if (a->max_attempts >= 0)
        json_object_set_new(req, "max_attempts", json_integer(a->max_attempts));
    char *s = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    return s;
}

/* Print the chosen view; returns the exit code the ToolResult implies. */
static int present(const cli_args *a, json_t *result)
{
    const char *status = json_string_value(json_object_get(result, "status"));
    json_t *content = json_object_get(result, "content");
    json_t *receipt = json_object_get(json_array_get(content, 0), "json");
    json_t *text = json_object_get(json_array_get(content, 1), "text");
    if (!status || !receipt || !json_is_string(text)) {
        fprintf(stderr, "verifetch: the broker answered with something that is not a ToolResult\n");
        return 2;
    }
    if (a->view == VIEW_TEXT) {
        vf_terminal_write(stdout, json_string_value(text), json_string_length(text));
        putchar('\n');
    } else {
        json_dumpf(a->view == VIEW_RECEIPT ? receipt : result, stdout, JSON_INDENT(2)), putchar('\n');
    }
    return strcmp(status, "success") == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("verifetch %s\n", VERIFETCH_VERSION);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "mcp") == 0)
        return vf_cli_mcp_main(argc - 1, argv + 1);
    cli_args a;
    if (parse_args(argc, argv, &a) != 0) {
        usage(stderr);
        return 2;
    }
    char *socket_path = vf_cli_socket_path(a.socket_path);
    char *body = request_body(&a);
    if (!socket_path || !body) {
        fprintf(stderr, "verifetch: out of memory\n");
        free(socket_path);
        free(body);
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    vf_cli_response resp;
    int code = 2;
    if (vf_cli_request(socket_path, "/v1/lookup", body, NULL, &resp) != 0) {
        fprintf(stderr, "verifetch: %s\n", resp.error);
        goto done;
    }
    json_error_t jerr;
    json_t *doc = json_loadb(resp.body ? resp.body : "", resp.len, 0, &jerr);
    if (resp.http != 200) {
        json_t *msg = json_object_get(json_object_get(doc, "error"), "message");
        json_t *field = json_object_get(json_object_get(doc, "error"), "field");
        fprintf(stderr, "verifetch: broker refused the request (HTTP %ld): %s%s%s\n", resp.http,
                json_string_value(field) && *json_string_value(field) ? json_string_value(field) : "",
                json_string_value(field) && *json_string_value(field) ? ": " : "",
                json_string_value(msg) ? json_string_value(msg) : "no message");
    } else if (!doc) {
        fprintf(stderr, "verifetch: broker answered with invalid JSON: %s\n", jerr.text);
    } else {
        code = present(&a, doc);
    }
    json_decref(doc);
done:
    curl_global_cleanup();
    vf_cli_response_free(&resp);
    free(body);
    free(socket_path);
    return code;
}
