/* Markup fingerprints are found whatever the case of the page's letters
 * (the scan folds them as it reads the page in place), at any offset, and
 * nothing else is folded into a match: '@', '[', '`', '{' and bytes with
 * the top bit set sit next to the letters' ranges. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "worker/content/wall_signals.h"

static bool has(const vf_wall_signals *s, const char *tok)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->tok[i], tok) == 0)
            return true;
    return false;
}

static vf_wall_signals scan(const char *html)
{
    vf_wall_signals s = { 0 };
    vf_wall_signals_scan_html(&s, html, strlen(html));
    return s;
}

Test(wall_signals, needles_match_in_any_case_at_any_offset)
{
    /* Every offset mod 8 and a tail shorter than eight bytes. */
    for (size_t pad = 0; pad < 17; pad++) {
        char html[256];
        memset(html, '.', pad);
        snprintf(html + pad, sizeof html - pad, "<script>window._CF_Chl_Opt={}</script>DiDoMi%.*s", (int)(pad % 7),
                 "xxxxxxx");
        vf_wall_signals s = scan(html);
        cr_assert(has(&s, "mk:cf-challenge"), "pad %zu", pad);
        cr_assert(has(&s, "mk:cmp=didomi"), "pad %zu", pad);
        cr_assert_eq(s.n, 2, "pad %zu: %zu signals", pad, s.n);
    }
}

Test(wall_signals, only_letters_are_lowered)
{
    /* Each of these is one byte off a letter of "didomi" after a wrong lowering. */
    const char *near[] = { "@idomi", "d[domi", "did`mi", "didom{", "d\xc4" "domi", "d\xe9" "domi" };
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
        char html[64];
        snprintf(html, sizeof html, "<p>12345678%s12345678</p>", near[i]);
        vf_wall_signals s = scan(html);
        cr_assert(!has(&s, "mk:cmp=didomi"), "'%s' matched", near[i]);
    }
    vf_wall_signals s = scan("<p>12345678DIDOMI12345678</p>");
    cr_assert(has(&s, "mk:cmp=didomi"));
}

Test(wall_signals, a_needle_found_once_is_reported_once)
{
    vf_wall_signals s = scan("Didomi didomi DIDOMI px-captcha PX-CAPTCHA <noscript>Enable JavaScript</noscript>");
    cr_assert_eq(s.n, 3);
    cr_assert(has(&s, "mk:cmp=didomi"));
    cr_assert(has(&s, "mk:px-captcha"));
    cr_assert(has(&s, "mk:noscript-js"));
}

/* The tests that look past a key (what follows it, how often it occurs)
 * fold case too, and keep to their windows. */
Test(wall_signals, key_tests_fold_case_and_keep_to_their_windows)
{
    vf_wall_signals s = scan("<script>{\"IsAccessibleForFree\": FALSE}</script>");
    cr_assert(has(&s, "mk:not-free"));
    s = scan("<script>{\"isAccessibleForFree\": true, \"headline\": \"false\"}</script>");
    cr_assert(!has(&s, "mk:not-free"), "'false' beyond the 24 bytes after the key");
    s = scan("<NOSCRIPT>Please enable JavaScript to continue.</NOSCRIPT>");
    cr_assert(has(&s, "mk:noscript-js"));
    char html[600];
    snprintf(html, sizeof html, "<noscript>%0310d javascript</noscript>", 0);
    s = scan(html);
    cr_assert(!has(&s, "mk:noscript-js"), "'javascript' beyond the 300 bytes after <noscript");
    s = scan("<div class=Skeleton></div><div class=SKELETON></div>");
    cr_assert(!has(&s, "mk:skeleton"), "two are not three");
    s = scan("<div class=Skeleton></div><div class=SKELETON></div><div class=skeleton-line></div>");
    cr_assert(has(&s, "mk:skeleton"));
}
