/* E2E: the direct provider and the normal worker against pages built to hurt
 * (tests/e2e_hostile/hostile_origin.py): decompression bombs, bodies and
 * responses that never end, oversized headers, redirect loops, broken text,
 * absurd nesting. Each must be classified with a precise detail, answered in
 * bounded time, and leave the broker healthy and small. */
#include "hostile.h"
#include "test_common.h"

TestSuite(hostile_pages, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

#define MAX_BODY (1u << 20)
#define BROKER_HWM_KIB (64L * 1024 * HH_MEM_SCALE)

static hh_origin origin;
static hx_broker broker;
static hx_broker_opts opts;
static char url[512];

static void start(unsigned timeout_ms)
{
    hh_origin_start(&origin, 120);
    hx_broker_opts_default(&opts);
    opts.max_body_bytes = MAX_BODY;
    opts.timeout_ms = timeout_ms;
    hx_broker_start(&broker, &opts);
}

static hx_response lookup(const char *path)
{
    hh_url(&origin, path, url, sizeof url);
    return hx_lookup(&broker, "{\"url\": \"%s\"}", url);
}

/* Healthy afterwards, never above the memory bound, nothing left behind. */
static void finish(void)
{
    tc_assert_healthy(&broker);
    long hwm = pi_status_kib(broker.pid, "VmHWM");
    cr_assert(hwm > 0, "cannot read VmHWM of verifetchd");
    cr_assert_lt(hwm, BROKER_HWM_KIB, "verifetchd peak RSS %ld KiB (bound %ld KiB)", hwm, BROKER_HWM_KIB);
    pid_t keep[] = { origin.pid };
    hx_broker_stop_checked(&broker, keep, 1);
}

/* One failed attempt: outcome, http_status and the words its detail must hold;
 * answered within limit_ms. */
static void expect_failure(const char *path, const char *outcome, int http_status, const char *const all[3],
                           double limit_ms)
{
    hx_response r = lookup(path);
    hx_receipt_expect e = tc_expect_one(false, url, outcome, http_status, NULL);
    for (size_t k = 0; k < 3 && all[k]; k++)
        e.attempts[0].detail_all[k] = all[k];
    free(hx_check_tool_result(&r, &e));
    cr_assert_lt(r.elapsed_ms, limit_ms, "%s answered after %.0f ms (bound %.0f ms)", path, r.elapsed_ms,
                 limit_ms);
    hx_response_free(&r);
}

static void expect_cap(const char *path)
{
    start(5000);
    const char *const words[3] = { "too_large", "decoded body exceeds 1048576 bytes" };
    expect_failure(path, "transport_error", 200, words, 5000);
    finish();
}

Test(hostile_pages, gzip_bomb_stops_at_the_decoded_size_cap)
{
    expect_cap("/gzip-bomb?mb=64");
}

Test(hostile_pages, brotli_bomb_stops_at_the_decoded_size_cap)
{
    start(5000);
    if (!origin.brotli)
        cr_skip_test("libbrotlienc is not loadable from python3 here, so no brotli bomb can be made");
    const char *const words[3] = { "too_large", "decoded body exceeds 1048576 bytes" };
    expect_failure("/br-bomb?mb=64", "transport_error", 200, words, 5000);
    finish();
}

Test(hostile_pages, zstd_bomb_stops_at_the_decoded_size_cap)
{
    start(5000);
    if (!origin.zstd)
        cr_skip_test("the zstd CLI is not installed, so no zstd bomb can be made");
    const char *const words[3] = { "too_large", "decoded body exceeds 1048576 bytes" };
    expect_failure("/zstd-bomb?mb=64", "transport_error", 200, words, 5000);
    finish();
}

Test(hostile_pages, endless_chunked_body_stops_at_the_cap)
{
    expect_cap("/endless-chunked");
}

/* Too slow to reach the cap: the deadline ends it, timeout + 3 s at most. */
Test(hostile_pages, dripping_chunked_body_stops_at_the_deadline)
{
    start(1500);
    const char *const words[3] = { "timeout" };
    expect_failure("/drip-chunked", "transport_error", HX_ANY, words, 1500 + 3000);
    finish();
}

Test(hostile_pages, slowloris_origin_stops_at_the_deadline)
{
    start(1500);
    const char *const words[3] = { "timeout" };
    expect_failure("/slowloris", "transport_error", HX_ANY, words, 1500 + 3000);
    finish();
}

Test(hostile_pages, a_mebibyte_of_headers_is_refused)
{
    start(5000);
    const char *const words[3] = { "response headers too large" };
    expect_failure("/huge-headers?kb=1024", "transport_error", HX_ANY, words, 5000);
    finish();
}

Test(hostile_pages, redirect_loop_ends_at_the_hop_limit)
{
    start(5000);
    const char *const words[3] = { "too many redirects" };
    expect_failure("/redirect-loop", "http_error", 302, words, 5000);
    finish();
}

/* Invalid UTF-8 and NULs: still usable prose, and the answer is valid JSON
 * (jansson refuses both bad UTF-8 and \u0000 unless asked) with no NUL in it. */
static void expect_clean_text(const char *path)
{
    start(5000);
    hx_response r = lookup(path);
    cr_assert_not_null(r.json, "answer is not valid JSON (bad UTF-8 or \\u0000?): %.800s", r.body);
    cr_assert_null(strstr(r.body, "\\u0000"), "a NUL escaped into the answer: %.800s", r.body);
    cr_assert_eq(strlen(r.body), r.body_len, "raw NUL byte in the answer");
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    json_t *block = json_object_get(json_array_get(json_object_get(r.json, "content"), 1), "text");
    cr_assert_eq(json_string_length(block), strlen(text), "text block holds a NUL");
    cr_assert(strstr(text, "This is the verifetch hostile origin."), "prose lost: %s", text);
    cr_assert(strstr(text, "BAD_TEXT_END"), "text after the bad bytes lost: %s", text);
    free(text);
    hx_response_free(&r);
    finish();
}

Test(hostile_pages, invalid_utf8_and_nul_in_html_give_clean_text)
{
    expect_clean_text("/bad-text");
}

Test(hostile_pages, invalid_utf8_and_nul_in_plain_text_give_clean_text)
{
    expect_clean_text("/bad-text?type=text/plain");
}

Test(hostile_pages, hundred_thousand_nested_tags_are_answered_quickly)
{
    start(5000);
    hx_response r = lookup("/nested?n=100000");
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "This is the verifetch hostile origin."), "prose before the nesting lost: %.300s",
              text);
    free(text);
    cr_assert_lt(r.elapsed_ms, 4000.0, "nested page answered after %.0f ms", r.elapsed_ms);
    hx_response_free(&r);
    finish();
}

/* Issue 13 item 5: origin-controlled text in details and the failure line
 * is printable ASCII (escaped), bounded, never a line break or bidi
 * control, whatever the origin put in a redirect host or a Content-Type. */
static void assert_failure_line_is_safe(const char *path)
{
    start(5000);
    hx_response r = lookup(path);
    cr_assert_not_null(r.json, "not JSON: %.400s", r.body);
    json_t *rc = hx_receipt(&r);
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(r.json, "content"), 1), "text"));
    cr_assert(text && strncmp(text, "LOOKUP FAILED:", 14) == 0, "body: %.800s", r.body);
    cr_assert_leq(strlen(text), 600, "failure line of %zu bytes", strlen(text));
    const char *detail =
        json_string_value(json_object_get(json_array_get(json_object_get(rc, "attempts_log"), 0), "detail"));
    cr_assert_not_null(detail);
    const char *both[] = { text, detail };
    for (size_t k = 0; k < 2; k++)
        for (const unsigned char *p = (const unsigned char *)both[k]; *p; p++)
            cr_assert(*p >= 0x20 && *p < 0x7f, "byte 0x%02x in '%s'", *p, both[k]);
    cr_log_info("%s: %s", path, text);
    cr_assert_null(strstr(text, "LOOKUP SUCCEEDED"), "spoofed line survived: %s", text);
    hx_response_free(&r);
    finish();
}

Test(hostile_pages, spoofing_redirect_host_stays_one_ascii_line)
{
    assert_failure_line_is_safe("/redirect-spoof");
}

Test(hostile_pages, spoofing_content_type_stays_one_ascii_line)
{
    assert_failure_line_is_safe("/ctype-spoof");
}

/* Issue 13 item 10: model-facing text carries no terminal or bidi controls. */
Test(hostile_pages, terminal_and_bidi_controls_never_reach_the_model)
{
    start(5000);
    hx_response r = lookup("/terminal-escapes");
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "END_MARK"), "text lost: %s", text);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        cr_assert(*p >= 0x20 || *p == '\n' || *p == '\t', "control 0x%02x in the text", *p);
        cr_assert(*p != 0x7f);
        cr_assert(!(p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f), "C1 control in the text");
        cr_assert(!(p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae), "bidi override in the text");
        cr_assert(!(p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9), "bidi isolate in the text");
    }
    json_t *rc = hx_receipt(&r);
    cr_assert_eq(json_integer_value(json_object_get(rc, "content_chars")), (json_int_t)strlen(text),
                 "content_chars must count the cleaned (ASCII here) text");
    free(text);
    hx_response_free(&r);
    finish();
}
