/* Which parts of an article page the production worker keeps as the main
 * content, under its real filter, page served from a loopback origin: the
 * classes of errors a main-content scorer makes on real news pages (words in
 * inline formatting lost, teaser links kept, comment threads and trailing
 * share or newsletter blocks kept). The pages are written for these tests. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Ordinary article prose: long enough, with commas, to score as content. */
#define PROSE " The council said the work took longer than planned, cost more than budgeted, " \
              "and left the neighbourhood without its usual route for most of the summer."

static const char page_head[] =
    "<html><head><title>Ferry returns</title></head><body>"
    "<nav><a href=\"/\">Home</a> <a href=\"/news\">News</a> <a href=\"/sport\">Sport</a></nav>"
    "<div class=\"wrap\"><article class=\"story\"><h1>Ferry returns</h1>";
static const char page_tail[] =
    "</article><aside><a href=\"/more\">More stories</a></aside></div>"
    "<footer>Copyright</footer></body></html>";

static char *page_with(const char *article)
{
    size_t n = strlen(page_head) + strlen(article) + strlen(page_tail) + 1;
    char *p = malloc(n);
    cr_assert_not_null(p);
    snprintf(p, n, "%s%s%s", page_head, article, page_tail);
    return p;
}

Test(main_content, words_in_inline_formatting_stay_in_their_sentence)
{
    char *page = page_with(
        "<p>The crossing was filmed for <em>Harbour</em> and <i>Tides</i>, said "
        "<b>Ann</b> of <a href=\"/w\"><em>The Wire</em></a>, <strong>again</strong>." PROSE "</p>"
        "<p>Second paragraph." PROSE "</p><p>Third paragraph." PROSE "</p>");
    static const uint32_t modes[] = { VF_RENDER_TEXT, VF_RENDER_TEXT | VF_RENDER_PAGE };
    for (size_t m = 0; m < 2; m++) {
        worker_run r;
        const char *t = html_text_of(page, modes[m], &r);
        cr_assert(strstr(t, "filmed for Harbour and Tides, said Ann of The Wire, again."),
                  "mode %u: %s", modes[m], t);
        cr_assert_str_eq(r.res.meta->extract, m == 0 ? "main" : "page");
        worker_run_free(&r);
    }
    free(page);
}

Test(main_content, short_paragraphs_that_are_all_link_are_teasers)
{
    char *page = page_with(
        "<p>First paragraph, with <a href=\"/src\">a cited source</a> inside it." PROSE "</p>"
        "<p><strong><a href=\"/other\">READ MORE: TEASERONE other ferry story</a></strong></p>"
        "<p>Second paragraph." PROSE "</p>"
        "<p><a href=\"/app\">TEASERTWO get the app by clicking here</a></p>"
        "<p>Third paragraph." PROSE "</p>"
        "<p>Short closing line, <a href=\"/tips\">tips welcome</a>.</p>");
    worker_run r;
    const char *t = html_text_of(page, VF_RENDER_TEXT, &r);
    cr_assert(strstr(t, "with a cited source inside it") && strstr(t, "Third paragraph"), "%s", t);
    cr_assert(strstr(t, "Short closing line, tips welcome."), "%s", t);
    cr_assert_null(strstr(t, "TEASERONE"), "%s", t);
    cr_assert_null(strstr(t, "TEASERTWO"), "%s", t);
    worker_run_free(&r);
    free(page);
}
