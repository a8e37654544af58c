/* Classification: every outcome and detail string, the order of checks, the
 * marker position rule, custom markers and bad marker patterns. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/classify.h"

#define ARTICLE "Tools decorated with @tool return a ToolResult that carries status and content."

static vf_classifier *make(const char *const *markers, size_t n)
{
    char err[256] = "";
    vf_classifier *c = vf_classifier_new(markers, n, err, sizeof err);
    cr_assert_not_null(c, "vf_classifier_new: %s", err);
    return c;
}

typedef struct {
    vf_outcome outcome;
    char detail[160];
    size_t chars;
} verdict;

static verdict judge(const vf_classifier *c, int status, const char *ctype, const char *text,
                     const char *must, unsigned min_chars)
{
    verdict v = {.chars = 12345};
    vf_classify_input in = {status, ctype, text, text ? strlen(text) : 0, must, min_chars};
    v.outcome = vf_classify(c, &in, v.detail, sizeof v.detail, &v.chars);
    return v;
}

/* A page of `chars` code points cycling through `filler`, with the ASCII
 * string `insert` starting at code point `at` (not at all when NULL). */
static char *page(size_t chars, const char *filler, const char *insert, size_t at)
{
    size_t o = 0, cp = 0, fi = 0;
    char *s = malloc(chars * 4 + 256);
    while (cp < chars) {
        if (insert && cp == at) {
            size_t n = strlen(insert);
            memcpy(s + o, insert, n);
            o += n;
            cp += n;
            insert = NULL;
            continue;
        }
        if (!filler[fi])
            fi = 0;
        size_t n = 1;
        while (((unsigned char)filler[fi + n] & 0xC0) == 0x80)
            n++;
        memcpy(s + o, filler + fi, n);
        o += n;
        fi += n;
        cp++;
    }
    s[o] = '\0';
    return s;
}

Test(classify, usable_content)
{
    vf_classifier *c = make(NULL, 0);
    verdict v = judge(c, 200, "text/html; charset=utf-8", ARTICLE, "@tool", 40);
    cr_expect_eq(v.outcome, VF_OUTCOME_OK);
    cr_expect_str_eq(v.detail, "usable content");
    cr_expect_eq(v.chars, strlen(ARTICLE));
    v = judge(c, 299, "application/json", "{\"content\": \"" ARTICLE "\"}", NULL, 0);
    cr_expect_eq(v.outcome, VF_OUTCOME_OK);
    vf_classifier_free(c);
}

Test(classify, non_2xx_is_http_error)
{
    vf_classifier *c = make(NULL, 0);
    int statuses[] = {404, 500, 302, 199, 300, 0};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        verdict v = judge(c, statuses[i], "text/html", "Not Found", NULL, 40);
        char want[32];
        snprintf(want, sizeof want, "HTTP %d", statuses[i]);
        cr_expect_eq(v.outcome, VF_OUTCOME_HTTP_ERROR, "status %d", statuses[i]);
        cr_expect_str_eq(v.detail, want);
        cr_expect_eq(v.chars, 9, "content_chars is set on failure too");
    }
    vf_classifier_free(c);
}

Test(classify, non_text_content_type)
{
    vf_classifier *c = make(NULL, 0);
    verdict v = judge(c, 200, "image/png", ARTICLE, NULL, 40);
    cr_expect_eq(v.outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    cr_expect_str_eq(v.detail, "content type 'image/png' is not text");
    v = judge(c, 200, " application/octet-stream ; x=1", ARTICLE, NULL, 40);
    cr_expect_str_eq(v.detail, "content type 'application/octet-stream' is not text");
    /* hostile header: control bytes are not copied, length is bounded */
    char evil[300];
    memset(evil, 'A', sizeof evil - 1);
    evil[sizeof evil - 1] = '\0';
    evil[3] = '\n';
    v = judge(c, 200, evil, ARTICLE, NULL, 40);
    cr_expect_eq(v.outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    cr_expect_null(strchr(v.detail, '\n'));
    cr_expect_lt(strlen(v.detail), 100);
    cr_expect_eq(strncmp(v.detail, "content type 'AAA?AAAA", 22), 0, "%s", v.detail);
    v = judge(c, 200, NULL, ARTICLE, NULL, 40);
    cr_expect_eq(v.outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    cr_expect_str_eq(v.detail, "no content type");
    vf_classifier_free(c);
}

Test(classify, seed_cookie_wall_is_an_interstitial)
{
    vf_classifier *c = make(NULL, 0);
    verdict v = judge(c, 200, "text/html",
                      "Just a moment... Enable JavaScript and cookies to continue.", NULL, 40);
    cr_expect_eq(v.outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    cr_expect_str_eq(v.detail, "interstitial page detected ('just a moment')");
    v = judge(c, 200, "text/html", "Attention Required! | Cloudflare", NULL, 0);
    cr_expect_str_eq(v.detail, "interstitial page detected ('attention required')");
    v = judge(c, 200, "text/html", "Please complete the CAPTCHA below.", NULL, 0);
    cr_expect_str_eq(v.detail, "interstitial page detected ('captcha')");
    vf_classifier_free(c);
}

Test(classify, too_short_counts_code_points)
{
    vf_classifier *c = make(NULL, 0);
    verdict v = judge(c, 200, "text/plain", "h\xc3\xa9llo w\xc3\xb6rld!", NULL, 40); /* 12 cp, 14 bytes */
    cr_expect_eq(v.outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    cr_expect_str_eq(v.detail, "content too short (12 < 40 characters)");
    cr_expect_eq(v.chars, 12);
    v = judge(c, 200, "text/plain", "h\xc3\xa9llo w\xc3\xb6rld!", NULL, 12);
    cr_expect_eq(v.outcome, VF_OUTCOME_OK, "exactly min_chars is enough");
    v = judge(c, 200, "text/plain", NULL, NULL, 1);
    cr_expect_str_eq(v.detail, "content too short (0 < 1 characters)");
    cr_expect_eq(v.chars, 0);
    vf_classifier_free(c);
}

Test(classify, must_contain_is_literal_and_case_sensitive)
{
    vf_classifier *c = make(NULL, 0);
    verdict v = judge(c, 200, "text/html", ARTICLE, "@Tool", 40);
    cr_expect_eq(v.outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    cr_expect_str_eq(v.detail, "required text not found");
    v = judge(c, 200, "text/html", ARTICLE, "status and", 40);
    cr_expect_eq(v.outcome, VF_OUTCOME_OK);
    v = judge(c, 200, "text/html", ARTICLE, "st.tus", 40); /* not a regex */
    cr_expect_str_eq(v.detail, "required text not found");
    vf_classifier_free(c);
}

Test(classify, order_status_type_interstitial_length_must_contain)
{
    vf_classifier *c = make(NULL, 0);
    const char *wall = "Just a moment...";
    cr_expect_str_eq(judge(c, 503, "image/png", wall, "x", 40).detail, "HTTP 503");
    cr_expect_str_eq(judge(c, 200, "image/png", wall, "x", 40).detail, "content type 'image/png' is not text");
    cr_expect_str_eq(judge(c, 200, "text/html", wall, "x", 40).detail, "interstitial page detected ('just a moment')");
    cr_expect_str_eq(judge(c, 200, "text/html", "short", "x", 40).detail, "content too short (5 < 40 characters)");
    vf_classifier_free(c);
}

Test(classify, marker_position_rule)
{
    vf_classifier *c = make(NULL, 0);
    /* long page, marker deep inside: a genuine article */
    char *s = page(5000, "lorem ipsum dolor sit amet ", "solve the captcha", 3000);
    cr_expect_eq(judge(c, 200, "text/html", s, NULL, 40).outcome, VF_OUTCOME_OK);
    free(s);
    /* long page, marker up front: a wall */
    s = page(5000, "lorem ipsum dolor sit amet ", "solve the captcha", 10);
    cr_expect_str_eq(judge(c, 200, "text/html", s, NULL, 40).detail, "interstitial page detected ('captcha')");
    free(s);
    /* short page, marker late: still a wall */
    s = page(1999, "lorem ipsum dolor sit amet ", "access denied", 1900);
    cr_expect_str_eq(judge(c, 200, "text/html", s, NULL, 40).detail,
                     "interstitial page detected ('access denied')");
    free(s);
    /* the head boundary is in code points, not bytes: start at code point
     * 999 counts, at 1000 does not (filler is 2-byte characters) */
    s = page(3000, "\xc3\xa9", "captcha", 999);
    cr_expect_eq(judge(c, 200, "text/html", s, NULL, 40).outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    free(s);
    s = page(3000, "\xc3\xa9", "captcha", 1000);
    cr_expect_eq(judge(c, 200, "text/html", s, NULL, 40).outcome, VF_OUTCOME_OK);
    free(s);
    vf_classifier_free(c);
}

Test(classify, custom_markers_replace_the_defaults)
{
    const char *markers[] = {"maintenance\\s+mode", "paywall"};
    vf_classifier *c = make(markers, 2);
    verdict v = judge(c, 200, "text/html", "Site in MAINTENANCE   Mode, back soon", NULL, 0);
    cr_expect_str_eq(v.detail, "interstitial page detected ('maintenance   mode')");
    v = judge(c, 200, "text/html", "Just a moment... Enable JavaScript and cookies to continue.", NULL, 40);
    cr_expect_eq(v.outcome, VF_OUTCOME_OK, "%s", v.detail);
    vf_classifier_free(c);
}

Test(classify, quoted_marker_is_bounded_and_clean)
{
    const char *markers[] = {"wall[a-z\\n]*"};
    vf_classifier *c = make(markers, 1);
    char text[256] = "WALL\nX";
    memset(text + 6, 'x', 200);
    text[206] = '\0';
    text[5] = 'x';
    verdict v = judge(c, 200, "text/html", text, NULL, 0);
    cr_expect_eq(v.outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    cr_expect_null(strchr(v.detail, '\n'));
    cr_expect_eq(strncmp(v.detail, "interstitial page detected ('wall xx", 36), 0, "%s", v.detail);
    cr_expect_eq(strlen(v.detail), strlen("interstitial page detected ('')") + 64);
    vf_classifier_free(c);
}

Test(classify, bad_marker_patterns_are_rejected)
{
    char err[256] = "";
    const char *bad[] = {"captcha", "(["};
    cr_expect_null(vf_classifier_new(bad, 2, err, sizeof err));
    cr_expect_eq(strncmp(err, "interstitial marker '([': ", 26), 0, "%s", err);
    const char *empty[] = {"x*"};
    err[0] = '\0';
    cr_expect_null(vf_classifier_new(empty, 1, err, sizeof err));
    cr_expect_str_eq(err, "interstitial marker 'x*': matches empty text");
}

Test(classify, runaway_marker_fails_closed)
{
    const char *markers[] = {"(a+)+$"};
    vf_classifier *c = make(markers, 1);
    char text[64];
    memset(text, 'a', 40);
    strcpy(text + 40, "b!");
    verdict v = judge(c, 200, "text/html", text, NULL, 0);
    cr_expect_eq(v.outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    cr_expect_str_eq(v.detail, "interstitial check failed (match limit)");
    vf_classifier_free(c);
}

Test(classify, invalid_utf8_text_does_not_break_matching)
{
    vf_classifier *c = make(NULL, 0);
    verdict v = judge(c, 200, "text/html", "\xff\xfe Just a moment \xc3", NULL, 0);
    cr_expect_str_eq(v.detail, "interstitial page detected ('just a moment')");
    vf_classifier_free(c);
}

Test(classify, tiny_or_missing_detail_buffer)
{
    vf_classifier *c = make(NULL, 0);
    vf_classify_input in = {404, "text/html", "x", 1, NULL, 0};
    char small[5];
    cr_expect_eq(vf_classify(c, &in, small, sizeof small, NULL), VF_OUTCOME_HTTP_ERROR);
    cr_expect_str_eq(small, "HTTP");
    cr_expect_eq(vf_classify(c, &in, NULL, 0, NULL), VF_OUTCOME_HTTP_ERROR);
    vf_classifier_free(c);
}

Test(classify, default_marker_list)
{
    const char *want[] = {"just a moment", "enable javascript and cookies", "checking your browser",
                          "attention required", "verify you are human", "are you a robot", "captcha",
                          "access denied", "cf-browser-verification", "please enable cookies",
                          "ddos protection by"};
    size_t n = 0;
    while (vf_default_interstitial_markers[n])
        n++;
    cr_assert_eq(n, sizeof want / sizeof want[0]);
    vf_classifier *c = make(NULL, 0);
    for (size_t i = 0; i < n; i++) {
        cr_expect_str_eq(vf_default_interstitial_markers[i], want[i]);
        char text[128], detail[160];
        snprintf(text, sizeof text, "Hello. %s. Thanks.", want[i]);
        snprintf(detail, sizeof detail, "interstitial page detected ('%s')", want[i]);
        cr_expect_str_eq(judge(c, 200, "text/html", text, NULL, 0).detail, detail);
    }
    vf_classifier_free(c);
}

Test(classify, outcome_names)
{
    cr_expect_str_eq(vf_outcome_name(VF_OUTCOME_OK), "ok");
    cr_expect_str_eq(vf_outcome_name(VF_OUTCOME_TRANSPORT_ERROR), "transport_error");
    cr_expect_str_eq(vf_outcome_name(VF_OUTCOME_HTTP_ERROR), "http_error");
    cr_expect_str_eq(vf_outcome_name(VF_OUTCOME_UNUSABLE_CONTENT), "unusable_content");
    cr_expect_str_eq(vf_outcome_name(VF_OUTCOME_MALFORMED_RESPONSE), "malformed_response");
}

Test(classify, content_type_is_text)
{
    const char *yes[] = {"text/plain", "Text/HTML; charset=UTF-8", " text/html ", "text/html;charset=x",
                         "application/json", "APPLICATION/JSON", "application/xml", "application/xhtml+xml",
                         "application/ld+json", "application/rss+xml", "application/vnd.api+json"};
    const char *no[] = {"image/png", "application/octet-stream", "application/javascript", "text", "text/",
                        "/html", "application/+json", "textual/html", "application/jsonp",
                        "text/html garbage", "", "image/svg+xml", "application/pdf"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        cr_expect(vf_content_type_is_text(yes[i]), "[%s] should be text", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        cr_expect_not(vf_content_type_is_text(no[i]), "[%s] should not be text", no[i]);
    cr_expect_not(vf_content_type_is_text(NULL));
}
