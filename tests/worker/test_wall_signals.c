/* Markup fingerprints are found whatever the case of the page's letters
 * (the scan lowers the page eight bytes at a time, then the rest), and
 * nothing else is lowered into a match: '@', '[', '`', '{' and bytes with
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
