/* Classification: every outcome and detail string, the order of checks,
 * wall families from titles, text and signals, precision on real pages,
 * extra markers, must_contain folding and thin pages. */
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
    char detail[VF_CLASSIFY_DETAIL_MAX];
    size_t chars;
} verdict;

static verdict judge(const vf_classifier *c, int status, const char *ctype, const char *text,
                     const char *must, unsigned min_chars)
{
    verdict v = {.chars = 12345};
    vf_classify_input in = {.http_status = status, .content_type = ctype, .text = text,
                            .text_len = text ? strlen(text) : 0, .must_contain = must, .min_chars = min_chars};
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
        verdict v = judge(c, statuses[i], "text/html", "Oops, a gremlin", NULL, 40);
        char want[32];
        snprintf(want, sizeof want, "HTTP %d", statuses[i]);
        cr_expect_eq(v.outcome, VF_OUTCOME_HTTP_ERROR, "status %d", statuses[i]);
        cr_expect_str_eq(v.detail, want);
        cr_expect_eq(v.chars, 15, "content_chars is set on failure too");
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

static verdict judge_page(const vf_classifier *c, int status, const char *title, const char *text,
                          size_t page_chars, bool password, const char *const *signals, size_t n_signals,
                          unsigned disabled)
{
    vf_page_evidence ev = {.title = title, .page_chars = page_chars, .password_field = password,
                           .signals = signals, .n_signals = n_signals};
    vf_classify_input in = {.http_status = status, .content_type = "text/html", .text = text,
                            .text_len = strlen(text), .min_chars = 40, .page = &ev,
                            .disabled_walls = disabled};
    vf_verdict v;
    vf_classify_verdict(c, &in, &v);
    verdict out = {.outcome = v.outcome, .chars = v.content_chars};
    snprintf(out.detail, sizeof out.detail, "%s", v.detail);
    return out;
}

static vf_wall wall_of(const vf_classifier *c, int status, const char *title, const char *text,
                       size_t page_chars, bool password, const char *signal)
{
    vf_page_evidence ev = {.title = title, .page_chars = page_chars, .password_field = password,
                           .signals = &signal, .n_signals = signal ? 1 : 0};
    vf_classify_input in = {.http_status = status, .content_type = "text/html", .text = text,
                            .text_len = strlen(text), .min_chars = 40, .page = &ev};
    vf_verdict v;
    vf_classify_verdict(c, &in, &v);
    return v.wall;
}

Test(classify, too_short_counts_code_points)
{
    vf_classifier *c = make(NULL, 0);
    verdict v = judge(c, 200, "text/plain", "h\xc3\xa9llo w\xc3\xb6rld!", NULL, 40); /* 12 cp, 14 bytes */
    cr_expect_eq(v.outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    cr_expect_str_eq(v.detail, "wall too_short: 12 < 40 characters of main content");
    cr_expect_eq(v.chars, 12);
    v = judge(c, 200, "text/plain", "h\xc3\xa9llo w\xc3\xb6rld!", NULL, 12);
    cr_expect_eq(v.outcome, VF_OUTCOME_OK, "exactly min_chars is enough");
    v = judge(c, 200, "text/plain", NULL, NULL, 1);
    cr_expect_str_eq(v.detail, "wall empty: no main-content text");
    cr_expect_eq(v.chars, 0);
    v = judge(c, 200, "text/plain", NULL, NULL, 0);
    cr_expect_eq(v.outcome, VF_OUTCOME_OK, "min_chars 0 accepts an empty page");
    vf_classifier_free(c);
}

Test(classify, order_status_type_wall_length_must_contain)
{
    vf_classifier *c = make(NULL, 0);
    const char *wall = "Just a moment...";
    cr_expect_str_eq(judge(c, 503, "image/png", wall, "x", 40).detail, "HTTP 503");
    cr_expect_str_eq(judge(c, 503, "text/html", wall, "x", 40).detail, "HTTP 503; wall bot_challenge: title 'just a moment'");
    cr_expect_str_eq(judge(c, 200, "image/png", wall, "x", 40).detail, "content type 'image/png' is not text");
    cr_expect_str_eq(judge(c, 200, "text/html", wall, "x", 40).detail, "wall bot_challenge: title 'just a moment'");
    cr_expect_str_eq(judge(c, 200, "text/html", "short", "x", 40).detail, "wall too_short: 5 < 40 characters of main content");
    cr_expect_str_eq(judge(c, 200, "text/html", ARTICLE, "x-y-z", 40).detail, "required text not found");
    vf_classifier_free(c);
}

Test(classify, extra_marker_position_rule)
{
    const char *markers[] = {"solve the puzzle"};
    vf_classifier *c = make(markers, 1);
    char *s = page(5000, "lorem ipsum dolor sit amet ", "solve the puzzle", 3000);
    cr_expect_eq(judge(c, 200, "text/html", s, NULL, 40).outcome, VF_OUTCOME_OK);
    free(s);
    s = page(5000, "lorem ipsum dolor sit amet ", "solve the puzzle", 10);
    cr_expect_str_eq(judge(c, 200, "text/html", s, NULL, 40).detail, "wall bot_challenge: marker 'solve the puzzle'");
    free(s);
    /* the head boundary is in code points, not bytes */
    s = page(3000, "\xc3\xa9", "solve the puzzle", 999);
    cr_expect_eq(judge(c, 200, "text/html", s, NULL, 40).outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    free(s);
    s = page(3000, "\xc3\xa9", "solve the puzzle", 1000);
    cr_expect_eq(judge(c, 200, "text/html", s, NULL, 40).outcome, VF_OUTCOME_OK);
    free(s);
    vf_classifier_free(c);
}

Test(classify, seed_cookie_wall_is_a_bot_challenge)
{
    vf_classifier *c = make(NULL, 0);
    verdict v = judge(c, 200, "text/html",
                      "Just a moment... Enable JavaScript and cookies to continue.", NULL, 40);
    cr_expect_eq(v.outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    cr_expect_str_eq(v.detail, "wall bot_challenge: text 'enable javascript and cookies to continue'");
    v = judge(c, 200, "text/html", "Attention Required! | Cloudflare", NULL, 0);
    cr_expect_str_eq(v.detail, "wall access_denied: title 'attention required' over 32 characters of main text");
    v = judge(c, 200, "text/html", "Security check\nPlease complete the CAPTCHA below.", NULL, 0);
    cr_expect_str_eq(v.detail, "wall bot_challenge: title 'security check'");
    v = judge(c, 200, "text/html", "Please complete the CAPTCHA below.", NULL, 0);
    cr_expect_str_eq(v.detail, "wall bot_challenge: text 'complete the captcha'");
    vf_classifier_free(c);
}

Test(classify, every_family_is_named)
{
    vf_classifier *c = make(NULL, 0);
    cr_expect_eq(wall_of(c, 200, "Just a moment...", "Checking your browser.", 0, false, NULL), VF_WALL_BOT_CHALLENGE);
    cr_expect_eq(wall_of(c, 403, "Forbidden", "", 0, false, "hdr:cf-mitigated=challenge"), VF_WALL_BOT_CHALLENGE);
    cr_expect_eq(wall_of(c, 200, "Access Denied", "You don't have permission to access this server.", 0, false, NULL),
                 VF_WALL_ACCESS_DENIED);
    cr_expect_eq(wall_of(c, 200, "Too Many Requests", "You have sent too many requests in a given amount of time.", 0,
                         false, NULL), VF_WALL_RATE_LIMITED);
    cr_expect_eq(wall_of(c, 429, NULL, "slow", 0, false, NULL), VF_WALL_RATE_LIMITED);
    cr_expect_eq(wall_of(c, 200, "Before you continue to Google", "We use cookies and data to deliver services.", 0,
                         false, "mk:google-consent"), VF_WALL_CONSENT);
    cr_expect_eq(wall_of(c, 200, "Big story", "The first paragraph of the story. Subscribe to continue reading.", 9000,
                         false, NULL), VF_WALL_PAYWALL);
    cr_expect_eq(wall_of(c, 200, "LinkedIn", "Email or phone. Password. Forgot password?", 0, true, NULL), VF_WALL_LOGIN);
    cr_expect_eq(wall_of(c, 200, "Page not found | Example News", "Sorry, we couldn't find that page.", 12000, false,
                         NULL), VF_WALL_SOFT_404);
    cr_expect_eq(wall_of(c, 200, "App", "You need to enable JavaScript to run this app.", 0, false, NULL),
                 VF_WALL_JS_REQUIRED);
    verdict v = judge_page(c, 200, "Blank", "  \n ", 0, false, NULL, 0, 0);
    cr_expect_str_eq(v.detail, "wall empty: no main-content text");
    v = judge_page(c, 200, "Short", "Tiny.", 0, false, NULL, 0, 0);
    cr_expect_str_eq(v.detail, "wall too_short: 5 < 40 characters of main content");
    vf_classifier_free(c);
}

Test(classify, localized_titles)
{
    vf_classifier *c = make(NULL, 0);
    const char *bot[] = {"Einen Moment…", "Un instant…", "Un momento…", "Chwileczkę…", "しばらくお待ちください",
                         "请稍候…", "Een ogenblik…", "Só um momento…", "Solo un momento…"};
    for (size_t i = 0; i < sizeof bot / sizeof bot[0]; i++)
        cr_expect_eq(wall_of(c, 200, bot[i], "…", 0, false, NULL), VF_WALL_BOT_CHALLENGE, "%s", bot[i]);
    const char *nf[] = {"Seite nicht gefunden", "Page introuvable", "Página no encontrada", "Pagina non trovata",
                        "Página não encontrada", "Pagina niet gevonden", "Nie znaleziono strony",
                        "ページが見つかりません", "页面未找到", "404 Not Found"};
    for (size_t i = 0; i < sizeof nf / sizeof nf[0]; i++)
        cr_expect_eq(wall_of(c, 200, nf[i], "Home · News · Sport", 0, false, NULL), VF_WALL_SOFT_404, "%s", nf[i]);
    vf_classifier_free(c);
}

Test(classify, generic_words_alone_spare_real_pages)
{
    vf_classifier *c = make(NULL, 0);
    /* The three genuine short pages. */
    verdict v = judge_page(c, 200, "City council approves new bike lanes",
                           "The city council voted 7-2 on Tuesday to add protected bike lanes on Main Street. "
                           "Construction starts in spring. This site is protected by reCAPTCHA and the Google "
                           "Privacy Policy and Terms of Service apply.",
                           900, false, (const char *const[]){"mk:captcha-widget"}, 1, 0);
    cr_expect_eq(v.outcome, VF_OUTCOME_OK, "%s", v.detail);
    v = judge_page(c, 200, "Troubleshoot Access Denied (403) errors",
                   "If a request returns Access Denied (403), check the bucket policy, the IAM policy and any "
                   "explicit deny. Access denied errors also come from missing KMS permissions.",
                   0, false, NULL, 0, 0);
    cr_expect_eq(v.outcome, VF_OUTCOME_OK, "%s", v.detail);
    v = judge_page(c, 200, "Release notes 4.2",
                   "Version 4.2 adds an optional CAPTCHA on the sign-up form, faster search, and fixes a crash "
                   "when exporting large projects. Administrators can enable the CAPTCHA under Settings.",
                   0, false, NULL, 0, 0);
    cr_expect_eq(v.outcome, VF_OUTCOME_OK, "%s", v.detail);
    vf_classifier_free(c);
}

Test(classify, substantial_main_content_beats_a_generic_title)
{
    vf_classifier *c = make(NULL, 0);
    char *s = page(2000, "lorem ipsum dolor sit amet ", NULL, 0);
    cr_expect_eq(judge_page(c, 200, "Access denied", s, 0, false, NULL, 0, 0).outcome, VF_OUTCOME_OK);
    cr_expect_eq(judge_page(c, 200, "Sign in", s, 0, false, NULL, 0, 0).outcome, VF_OUTCOME_OK);
    cr_expect_eq(judge_page(c, 200, "Not found", s, 0, false, NULL, 0, 0).outcome, VF_OUTCOME_OK);
    /* a long article that mentions a wall sentence in its body */
    char *t = page(5000, "lorem ipsum dolor sit amet ", "verify you are human", 3000);
    cr_expect_eq(judge_page(c, 200, "How bot walls work", t, 0, false, NULL, 0, 0).outcome, VF_OUTCOME_OK);
    free(t);
    free(s);
    vf_classifier_free(c);
}

Test(classify, decisive_header_on_a_403_is_named)
{
    vf_classifier *c = make(NULL, 0);
    const char *sig[] = {"hdr:cf-mitigated=challenge"};
    verdict v = judge_page(c, 403, NULL, "", 0, false, sig, 1, 0);
    cr_expect_eq(v.outcome, VF_OUTCOME_HTTP_ERROR);
    cr_expect_str_eq(v.detail, "HTTP 403; wall bot_challenge: signal hdr:cf-mitigated=challenge");
    vf_classifier_free(c);
}

Test(classify, disabled_family_is_skipped)
{
    vf_classifier *c = make(NULL, 0);
    const char *text = "First paragraph of the story, with a few more words to pass the length test. "
                       "Subscribe to continue reading.";
    cr_expect_eq(judge_page(c, 200, "Story", text, 0, false, NULL, 0, 0).outcome, VF_OUTCOME_UNUSABLE_CONTENT);
    verdict v = judge_page(c, 200, "Story", text, 0, false, NULL, 0, VF_WALL_BIT(VF_WALL_PAYWALL));
    cr_expect_eq(v.outcome, VF_OUTCOME_OK, "%s", v.detail);
    vf_classifier_free(c);
}

Test(classify, extra_markers_add_to_the_builtins)
{
    const char *markers[] = {"maintenance\\s+mode", "paywall: members[- ]only"};
    vf_classifier *c = make(markers, 2);
    verdict v = judge(c, 200, "text/html", "Site in MAINTENANCE   Mode, back soon", NULL, 0);
    cr_expect_str_eq(v.detail, "wall bot_challenge: marker 'maintenance   mode'");
    v = judge(c, 200, "text/html", "A story for Members-Only readers.", NULL, 0);
    cr_expect_str_eq(v.detail, "wall paywall: marker 'members-only'");
    v = judge(c, 200, "text/html", "Just a moment... Enable JavaScript and cookies to continue.", NULL, 40);
    cr_expect_eq(v.outcome, VF_OUTCOME_UNUSABLE_CONTENT, "built-ins stay on: %s", v.detail);
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
    cr_expect_eq(strncmp(v.detail, "wall bot_challenge: marker 'wall xx", 35), 0, "%s", v.detail);
    cr_expect_eq(strlen(v.detail), strlen("wall bot_challenge: marker ''") + 64);
    vf_classifier_free(c);
}

Test(classify, bad_marker_patterns_are_rejected)
{
    char err[256] = "";
    const char *bad[] = {"captcha", "(["};
    cr_expect_null(vf_classifier_new(bad, 2, err, sizeof err));
    cr_expect_eq(strncmp(err, "extra marker '([': ", 19), 0, "%s", err);
    const char *empty[] = {"x*"};
    err[0] = '\0';
    cr_expect_null(vf_classifier_new(empty, 1, err, sizeof err));
    cr_expect_str_eq(err, "extra marker 'x*': matches empty text");
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
    cr_expect_str_eq(v.detail, "wall bot_challenge: marker check failed (match limit)");
    vf_classifier_free(c);
}

Test(classify, invalid_utf8_text_does_not_break_matching)
{
    vf_classifier *c = make(NULL, 0);
    verdict v = judge(c, 200, "text/html", "\xff\xfe Just a moment \xc3", NULL, 0);
    cr_expect_str_eq(v.detail, "wall bot_challenge: title 'just a moment'");
    vf_classifier_free(c);
}

Test(classify, tiny_or_missing_detail_buffer)
{
    vf_classifier *c = make(NULL, 0);
    vf_classify_input in = {.http_status = 404, .content_type = "text/html", .text = "x", .text_len = 1};
    char small[5];
    cr_expect_eq(vf_classify(c, &in, small, sizeof small, NULL), VF_OUTCOME_HTTP_ERROR);
    cr_expect_str_eq(small, "HTTP");
    cr_expect_eq(vf_classify(c, &in, NULL, 0, NULL), VF_OUTCOME_HTTP_ERROR);
    vf_classifier_free(c);
}

Test(classify, must_contain_folds_unicode_case_quotes_dashes_and_spaces)
{
    vf_classifier *c = make(NULL, 0);
    const char *text = "It\xe2\x80\x99s the \xe2\x80\x9c" "final\xe2\x80\x9d" " release \xe2\x80\x94 version\xc2\xa0\xc2\xa0" "2.0 "
                       "of the \xef\xbc\xa1" "\xef\xbc\xB0" "\xef\xbc\xa9" " for Stra\xc3\x9f" "e data.";
    const char *hits[] = {"it's the \"final\" release", "RELEASE - VERSION 2.0", "the API", "strasse"};
    for (size_t i = 0; i < sizeof hits / sizeof hits[0]; i++)
        cr_expect_eq(judge(c, 200, "text/html", text, hits[i], 10).outcome, VF_OUTCOME_OK, "%s", hits[i]);
    cr_expect_str_eq(judge(c, 200, "text/html", text, "version 3", 10).detail, "required text not found");
    /* exact mode keeps bytes */
    vf_classify_input in = {.http_status = 200, .content_type = "text/html", .text = text,
                            .text_len = strlen(text), .must_contain = "it's", .must_contain_exact = true};
    cr_expect_eq(vf_classify(c, &in, NULL, 0, NULL), VF_OUTCOME_UNUSABLE_CONTENT);
    in.must_contain = "It\xe2\x80\x99s";
    cr_expect_eq(vf_classify(c, &in, NULL, 0, NULL), VF_OUTCOME_OK);
    vf_classifier_free(c);
}

Test(classify, thin_but_real_page_is_ok_and_marked_thin)
{
    vf_classifier *c = make(NULL, 0);
    const char *text = "We are pleased to announce that the 2027 conference will be held in Lisbon from 4 to 6 "
                       "May. Registration opens in January.";
    vf_classify_input in = {.http_status = 200, .content_type = "text/html", .text = text,
                            .text_len = strlen(text), .min_chars = 40};
    vf_verdict v;
    vf_classify_verdict(c, &in, &v);
    cr_expect_eq(v.outcome, VF_OUTCOME_OK, "%s", v.detail);
    cr_expect(v.thin);
    cr_expect_eq(v.wall, VF_WALL_NONE);
    char *s = page(VF_THIN_CHARS, "abc ", NULL, 0);
    in.text = s;
    in.text_len = strlen(s);
    vf_classify_verdict(c, &in, &v);
    cr_expect_not(v.thin, "the threshold itself is not thin");
    free(s);
    vf_classifier_free(c);
}

Test(classify, wall_names_round_trip)
{
    for (unsigned w = 1; w < VF_WALL_COUNT; w++)
        cr_expect_eq(vf_wall_from_name(vf_wall_name((vf_wall)w)), (vf_wall)w);
    cr_expect_eq(vf_wall_from_name("nope"), VF_WALL_NONE);
    cr_expect_not(vf_wall_can_disable(VF_WALL_TOO_SHORT));
    cr_expect(vf_wall_can_disable(VF_WALL_PAYWALL));
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
