/* Wall families through the real broker and confined workers: a corpus page
 * of each family is named at status 200 (as a fetch API relays it) and at
 * its real status with its real headers; every genuine corpus page stays
 * ok; and must_contain cannot reveal text that redaction hides. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "test_common.h"

static tc_env t;

TestSuite(judge, .init = hx_setup, .fini = hx_teardown, .timeout = 60);

/* One lookup of corpus page file (at its real status when real). */
static hx_response corpus_lookup(const char *file, bool real, const char *extra)
{
    char path[256];
    snprintf(path, sizeof path, "/corpus?file=%s%s", file, real ? "&real=1" : "");
    return tc_lookup(&t, tc_url(&t, path), extra);
}

static json_t *last_attempt(const hx_response *r)
{
    json_t *log = json_object_get(hx_receipt(r), "attempts_log");
    return json_array_get(log, json_array_size(log) - 1);
}

static void expect_wall(const char *file, bool real, const char *family)
{
    hx_response r = corpus_lookup(file, real, NULL);
    json_t *rc = hx_receipt(&r);
    json_t *a = last_attempt(&r);
    const char *wall = json_string_value(json_object_get(a, "wall"));
    const char *detail = json_string_value(json_object_get(a, "detail"));
    cr_assert(json_is_false(json_object_get(rc, "ok")), "%s (%s) passed as content: %s", file,
              real ? "real status" : "200", r.body);
    cr_assert(wall && strcmp(wall, family) == 0, "%s (%s): wall %s, want %s; detail: %s", file,
              real ? "real status" : "200", wall ? wall : "null", family, detail ? detail : "?");
    char want[64];
    snprintf(want, sizeof want, "wall %s: ", family);
    cr_assert(detail && strstr(detail, want), "%s: detail '%s' does not name the family", file, detail);
    const char *text = json_string_value(json_object_get(json_array_get(json_object_get(r.json, "content"), 1), "text"));
    cr_assert(text && strncmp(text, "LOOKUP FAILED:", 14) == 0, "%s: failure text: %s", file, text);
    hx_response_free(&r);
}

Test(judge, bot_challenge)
{
    tc_start(&t, NULL);
    expect_wall("bot_cf_einen_moment_de.html", true, "bot_challenge");
    expect_wall("bot_perimeterx_press_hold.html", false, "bot_challenge");
    expect_wall("bot_datadome.html", false, "bot_challenge");
}

Test(judge, access_denied)
{
    tc_start(&t, NULL);
    expect_wall("denied_akamai.html", false, "access_denied");
    expect_wall("denied_cloudfront.html", true, "access_denied");
}

Test(judge, rate_limited)
{
    tc_start(&t, NULL);
    expect_wall("rate_429_en.html", false, "rate_limited");
    expect_wall("rate_de.html", true, "rate_limited");
}

Test(judge, consent_wall)
{
    tc_start(&t, NULL);
    expect_wall("consent_google_en.html", false, "consent_wall");
    expect_wall("consent_youtube_de.html", true, "consent_wall");
}

Test(judge, paywall)
{
    tc_start(&t, NULL);
    expect_wall("paywall_hard_en.html", false, "paywall");
    expect_wall("paywall_fr.html", true, "paywall");
}

Test(judge, login_wall)
{
    tc_start(&t, NULL);
    expect_wall("login_linkedin_like.html", false, "login_wall");
    expect_wall("login_de.html", true, "login_wall");
}

Test(judge, soft_404)
{
    tc_start(&t, NULL);
    expect_wall("soft404_en.html", false, "soft_404");
    expect_wall("soft404_de.html", false, "soft_404");
}

Test(judge, js_required)
{
    tc_start(&t, NULL);
    expect_wall("js_cra_shell.html", false, "js_required");
    expect_wall("js_de.html", true, "js_required");
}

Test(judge, empty_and_too_short)
{
    tc_start(&t, NULL);
    expect_wall("empty_body.html", false, "empty");
    expect_wall("too_short_ok.html", false, "too_short");
}

/* Every genuine corpus page (manifest "expect": "ok") stays ok, four slices
 * so each test stays short. */
static void genuine_slice(int slice, int slices)
{
    char path[1024];
    size_t len = 0;
    snprintf(path, sizeof path, "%s/tests/judge/corpus/manifest.json", getenv("VERIFETCH_SOURCE_ROOT"));
    char *raw = hx_read_file(path, &len);
    cr_assert_not_null(raw, "cannot read %s", path);
    json_t *m = json_loadb(raw, len, 0, NULL);
    free(raw);
    json_t *pages = json_object_get(m, "pages");
    tc_start(&t, NULL);
    int seen = 0, checked = 0;
    for (size_t i = 0; i < json_array_size(pages); i++) {
        json_t *p = json_array_get(pages, i);
        if (strcmp(json_string_value(json_object_get(p, "expect")), "ok") != 0)
            continue;
        if (seen++ % slices != slice)
            continue;
        const char *file = json_string_value(json_object_get(p, "file"));
        hx_response r = corpus_lookup(file, false, NULL);
        json_t *a = last_attempt(&r);
        cr_expect(json_is_true(json_object_get(hx_receipt(&r), "ok")), "genuine page %s rejected: %s", file,
                  json_string_value(json_object_get(a, "detail")));
        cr_expect(json_is_null(json_object_get(a, "wall")), "genuine page %s named a wall", file);
        hx_response_free(&r);
        checked++;
    }
    cr_assert_gt(checked, 5, "slice %d checked only %d pages", slice, checked);
    json_decref(m);
}

Test(judge, genuine_pages_stay_ok_0) { genuine_slice(0, 4); }
Test(judge, genuine_pages_stay_ok_1) { genuine_slice(1, 4); }
Test(judge, genuine_pages_stay_ok_2) { genuine_slice(2, 4); }
Test(judge, genuine_pages_stay_ok_3) { genuine_slice(3, 4); }

/* Issue 13 item 2: must_contain is judged on the redacted text the caller
 * receives, so a guessed secret (or a prefix of one) never turns ok. On the
 * old code the first lookup of each pair came back ok. */
static void expect_hidden(const char *route, const char *needle)
{
    const char *url = tc_url(&t, route);
    char extra[256];
    snprintf(extra, sizeof extra, ", \"must_contain\": \"%s\"", needle);
    hx_response r = tc_lookup(&t, url, extra);
    hx_receipt_expect e = tc_expect_one(false, url, "unusable_content", 200, "required text not found");
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
}

Test(judge, must_contain_is_no_oracle_on_redacted_text)
{
    tc_start(&t, NULL);
    expect_hidden("/secret-page", "AKIAIOSFODNN7EXAMPLE");
    expect_hidden("/secret-page", "AKIAIOSF");
    expect_hidden("/token-page", "Zq8Xw3Rt5Yu7Io9Pa1Sd");
    expect_hidden("/token-page", "token=Zq8");
    /* What the caller does see still matches, and content_chars counts it. */
    const char *url = tc_url(&t, "/secret-page");
    hx_response r = tc_lookup(&t, url, ", \"must_contain\": \"access key id is [REDACTED]\"");
    hx_receipt_expect ok = tc_expect_one(true, url, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &ok);
    cr_assert(!strstr(text, "AKIAIOSFODNN7EXAMPLE"), "secret in text: %s", text);
    free(text);
    hx_response_free(&r);
}

/* min_chars on the redacted text: a page whose length crosses min_chars only
 * through the hidden value does not pass. content_chars equals what the
 * caller receives (checked by hx_check_tool_result for every ok lookup). */
Test(judge, min_chars_counts_the_redacted_text)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/secret-page");
    hx_response r = tc_lookup(&t, url, NULL);
    json_int_t chars = json_integer_value(json_object_get(hx_receipt(&r), "content_chars"));
    hx_response_free(&r);
    cr_assert_gt(chars, 0);
    char extra[64];
    snprintf(extra, sizeof extra, ", \"min_chars\": %lld", (long long)chars + 1);
    r = tc_lookup(&t, url, extra);
    cr_assert(json_is_false(json_object_get(hx_receipt(&r), "ok")), "min_chars above the received length passed");
    hx_response_free(&r);
}
