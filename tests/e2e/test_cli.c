/* E2E: the `verifetch` command-line client against a live broker.
 * Exit codes: 0 status success, 1 status error, 2 usage or connection error. */
#include "test_common.h"
#include "harness_internal.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(cli, .init = hx_setup, .fini = hx_teardown, .timeout = 30);

static tc_env t;

typedef struct {
    int exit_code;
    char *out;
    char *err;
    json_t *json;
} cli_run;

/* argv after the program name; NULL-terminated. */
static cli_run run_cli(const char *const *args)
{
    char bin[PATH_MAX], out_path[PATH_MAX], err_path[PATH_MAX];
    hx_build_path("cli/verifetch", bin, sizeof bin);
    cr_assert(access(bin, X_OK) == 0, "%s is not built", bin);
    snprintf(out_path, sizeof out_path, "%s/cli.out", hx_tmpdir());
    snprintf(err_path, sizeof err_path, "%s/cli.err", hx_tmpdir());
    char *argv[16];
    size_t n = 0;
    argv[n++] = bin;
    for (; *args && n < 15; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    int st = hx_run(argv, out_path, err_path, 20000);
    cli_run c = { 0 };
    cr_assert(st != -1, "verifetch did not finish within 20 s");
    cr_assert(WIFEXITED(st), "verifetch died with status 0x%x", st);
    c.exit_code = WEXITSTATUS(st);
    c.out = hx_read_file(out_path, NULL);
    c.err = hx_read_file(err_path, NULL);
    json_error_t jerr;
    c.json = c.out ? json_loads(c.out, 0, &jerr) : NULL;
    return c;
}

static void cli_free(cli_run *c)
{
    free(c->out);
    free(c->err);
    json_decref(c->json);
}

/* The CLI prints the broker's ToolResult; check it like a direct answer. */
static char *check_printed_result(const cli_run *c, const hx_receipt_expect *e)
{
    hx_response r = { .status = 200, .body = c->out, .json = c->json };
    cr_assert_not_null(c->json, "stdout is not JSON: %s (stderr: %s)", c->out, c->err);
    return hx_check_tool_result(&r, e);
}

Test(cli, success_exits_0_and_prints_tool_result)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/page");
    const char *args[] = { "lookup", url, "--socket", t.broker.socket_path, NULL };
    cli_run c = run_cli(args);
    cr_assert_eq(c.exit_code, 0, "stdout: %s\nstderr: %s", c.out, c.err);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = check_printed_result(&c, &e);
    cr_assert(strstr(text, "verifetch origin article"), "text: %s", text);
    free(text);
    cli_free(&c);
}

Test(cli, failed_lookup_exits_1)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/404");
    const char *args[] = { "lookup", url, "--socket", t.broker.socket_path, NULL };
    cli_run c = run_cli(args);
    cr_assert_eq(c.exit_code, 1, "stdout: %s\nstderr: %s", c.out, c.err);
    hx_receipt_expect e = tc_expect_one(false, url, "http_error", 404, "HTTP 404");
    free(check_printed_result(&c, &e));
    cli_free(&c);
}

Test(cli, must_contain_and_min_chars_reach_the_broker)
{
    tc_start(&t, NULL);
    const char *page = tc_url(&t, "/page");
    const char *a1[] = { "lookup", page, "--must-contain", "zebra crossing",
                         "--socket", t.broker.socket_path, NULL };
    cli_run c = run_cli(a1);
    cr_assert_eq(c.exit_code, 1, "stdout: %s\nstderr: %s", c.out, c.err);
    hx_receipt_expect e =
        tc_expect_one(false, page, "unusable_content", 200, "required text not found");
    free(check_printed_result(&c, &e));
    cli_free(&c);

    char shorturl[512];
    snprintf(shorturl, sizeof shorturl, "%s", tc_url(&t, "/short"));
    const char *a2[] = { "lookup", shorturl, "--min-chars", "5",
                         "--socket", t.broker.socket_path, NULL };
    c = run_cli(a2);
    cr_assert_eq(c.exit_code, 1, "stdout: %s\nstderr: %s", c.out, c.err);
    e = tc_expect_one(false, shorturl, "unusable_content", 200,
                      "wall too_short: 4 < 5 characters of main content");
    free(check_printed_result(&c, &e));
    cli_free(&c);

    const char *a3[] = { "lookup", shorturl, "--min-chars", "0",
                         "--socket", t.broker.socket_path, NULL };
    c = run_cli(a3);
    cr_assert_eq(c.exit_code, 0, "stdout: %s\nstderr: %s", c.out, c.err);
    cli_free(&c);
}

Test(cli, missing_socket_exits_2_with_message)
{
    char sock[PATH_MAX];
    snprintf(sock, sizeof sock, "%s/no-such.sock", hx_tmpdir());
    const char *args[] = { "lookup", "http://127.0.0.1/", "--socket", sock, NULL };
    cli_run c = run_cli(args);
    cr_assert_eq(c.exit_code, 2, "stdout: %s\nstderr: %s", c.out, c.err);
    cr_assert(c.err && c.err[0], "no message on stderr");
    cli_free(&c);
}

static void expect_usage_error(const char *const *args, const char *what)
{
    cli_run c = run_cli(args);
    cr_assert_eq(c.exit_code, 2, "%s: exit %d, stdout: %s\nstderr: %s", what, c.exit_code, c.out,
                 c.err);
    cr_assert(c.err && c.err[0], "%s: no message on stderr", what);
    cli_free(&c);
}

Test(cli, usage_errors_exit_2)
{
    const char *none[] = { NULL };
    const char *no_url[] = { "lookup", NULL };
    const char *bad_cmd[] = { "frobnicate", "http://127.0.0.1/", NULL };
    const char *bad_opt[] = { "lookup", "http://127.0.0.1/", "--bogus", NULL };
    const char *bad_num[] = { "lookup", "http://127.0.0.1/", "--min-chars", "many", NULL };
    const char *no_arg[] = { "lookup", "http://127.0.0.1/", "--must-contain", NULL };
    expect_usage_error(none, "no arguments");
    expect_usage_error(no_url, "lookup without URL");
    expect_usage_error(bad_cmd, "unknown command");
    expect_usage_error(bad_opt, "unknown option");
    expect_usage_error(bad_num, "non-numeric --min-chars");
    expect_usage_error(no_arg, "--must-contain without value");
}

Test(cli, text_and_receipt_views)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/page");
    const char *a1[] = { "lookup", url, "--text", "--socket", t.broker.socket_path, NULL };
    cli_run c = run_cli(a1);
    cr_assert_eq(c.exit_code, 0, "stdout: %s\nstderr: %s", c.out, c.err);
    cr_assert_null(c.json, "--text printed JSON: %s", c.out);
    cr_assert(strstr(c.out, "verifetch origin article"), "--text output: %s", c.out);
    cr_assert_null(strstr(c.out, "attempts_log"), "--text printed the receipt: %s", c.out);
    cli_free(&c);

    const char *a2[] = { "lookup", url, "--receipt", "--socket", t.broker.socket_path, NULL };
    c = run_cli(a2);
    cr_assert_eq(c.exit_code, 0, "stdout: %s\nstderr: %s", c.out, c.err);
    cr_assert_not_null(c.json, "--receipt is not JSON: %s", c.out);
    cr_assert_str_eq(json_string_value(json_object_get(c.json, "schema")), "verified_web_lookup.receipt/v1");
    cr_assert_null(json_object_get(c.json, "content"), "--receipt printed the whole ToolResult");
    cr_assert_null(strstr(c.out, "verifetch origin article"), "--receipt printed page text");
    cli_free(&c);
}

/* One canonical JSON log line per lookup on the broker's stderr, redacted. */
Test(cli, broker_logs_one_redacted_line_per_lookup)
{
    tc_start(&t, NULL);
    char url[600];
    snprintf(url, sizeof url, "%s", tc_url(&t, "/page?token=tok-SECRET-98765"));
    hx_response r = hx_lookup(&t.broker, "{\"url\":\"%s\"}", url);
    cr_assert_eq(r.status, 200);
    hx_response_free(&r);
    char *log = hx_read_file(t.broker.stderr_path, NULL);
    cr_assert_not_null(log);
    cr_assert_null(strstr(log, "tok-SECRET-98765"), "the log holds the token: %s", log);
    size_t lines = 0;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t jerr;
        json_t *j = json_loads(line, 0, &jerr);
        const char *event = json_string_value(json_object_get(j, "event"));
        if (event && strcmp(event, "lookup") == 0) {
            lines++;
            cr_assert_str_eq(json_string_value(json_object_get(j, "tenant")), "e2e");
            cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "success");
            cr_assert_eq(json_integer_value(json_object_get(j, "attempts")), 1);
            cr_assert(strstr(json_string_value(json_object_get(j, "url")), "token=[REDACTED]"));
            cr_assert(json_is_integer(json_object_get(j, "duration_ms")));
        }
        json_decref(j);
    }
    cr_assert_eq(lines, 1, "expected one lookup log line");
    free(log);
}

/* Issue 13 item 3: a socket directory in a world-writable place that others
 * can write is refused before connecting (an impostor listens there). */
Test(cli, squatted_socket_directory_is_refused_before_connecting)
{
    char shared[PATH_MAX], dir[PATH_MAX], sock[PATH_MAX];
    hx_fmt(shared, sizeof shared, "%s/shared", hx_tmpdir());
    hx_fmt(dir, sizeof dir, "%s/verifetch-squat", shared);
    hx_fmt(sock, sizeof sock, "%s/verifetch.sock", dir);
    cr_assert_eq(mkdir(shared, 0700), 0);
    cr_assert_eq(chmod(shared, 01777), 0); /* stands in for /tmp */
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(chmod(dir, 0777), 0);
    int impostor = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    hx_fmt(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    cr_assert(impostor >= 0 && bind(impostor, (struct sockaddr *)&sa, sizeof sa) == 0 &&
              listen(impostor, 4) == 0);
    const char *args[] = { "lookup", "http://127.0.0.1/", "--socket", sock, NULL };
    cli_run c = run_cli(args);
    close(impostor);
    cr_assert_eq(c.exit_code, 2, "stdout: %s\nstderr: %s", c.out, c.err);
    cr_assert(c.err && strstr(c.err, "writable by group or others"), "stderr: %s", c.err);
    cli_free(&c);
}
