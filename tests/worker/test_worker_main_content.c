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

Test(main_content, comment_thread_is_not_the_article_even_when_the_article_is_short)
{
    /* About 300 characters of article, then ten times that in comments. */
    char comments[8192] = "";
    for (int i = 0; i < 10; i++)
        strcat(comments, "<li class=\"comment\"><div class=\"comment-body\"><p>COMMENTTOKEN "
                         "I read this twice, and I still think the schedule, the budget and "
                         "the route were all wrong, which the council should admit.</p>"
                         "</div></li>");
    char page[16384];
    snprintf(page, sizeof page,
             "<html><body><div class=\"site\"><main><article class=\"post\"><h1>Open thread</h1>"
             "<p>ARTICLETOKEN This is our open thread for the month." PROSE "</p>"
             "<p>Leave questions below, we answer them promptly.</p></article>"
             "<div id=\"comments\" class=\"comments-area\"><h3>Comments</h3>"
             "<ul class=\"comment-list\">%s</ul></div></main></div></body></html>",
             comments);
    worker_run r;
    const char *t = html_text_of(page, VF_RENDER_TEXT, &r);
    cr_assert(strstr(t, "ARTICLETOKEN") && strstr(t, "we answer them promptly"), "%s", t);
    cr_assert_null(strstr(t, "COMMENTTOKEN"), "%s", t);
    cr_assert_str_eq(r.res.meta->extract, "main");
    worker_run_free(&r);
}

Test(main_content, captions_credits_and_bylines_leave_the_pick_not_the_page)
{
    char *page = page_with(
        "<p class=\"byline\">By BYLINETOKEN Reporter</p>"
        "<span class=\"timestamp\">Updated STAMPTOKEN 5:27 am</span>"
        "<p>First paragraph." PROSE "</p>"
        "<figure><img src=\"/f.jpg\" alt=\"ferry\"><figcaption>CAPTIONTOKEN The ferry at dawn"
        "</figcaption></figure>"
        "<div class=\"photo\"><img src=\"/g.jpg\"><span class=\"image-credit\">CREDITTOKEN "
        "Getty</span></div>"
        "<p>Second paragraph." PROSE "</p><p>Third paragraph." PROSE "</p>");
    worker_run r;
    const char *t = html_text_of(page, VF_RENDER_TEXT, &r);
    cr_assert(strstr(t, "First paragraph") && strstr(t, "Third paragraph"), "%s", t);
    static const char *const gone[] = { "BYLINETOKEN", "STAMPTOKEN", "CAPTIONTOKEN", "CREDITTOKEN" };
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
        cr_assert_null(strstr(t, gone[i]), "%s kept: %s", gone[i], t);
    worker_run_free(&r);
    /* extract=page is the whole pruned page: nothing of the article is judged. */
    t = html_text_of(page, VF_RENDER_TEXT | VF_RENDER_PAGE, &r);
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
        cr_assert(strstr(t, gone[i]), "%s lost in page mode: %s", gone[i], t);
    worker_run_free(&r);
    free(page);
}

Test(main_content, article_cut_into_chunks_comes_back_whole)
{
    static const char page[] =
        "<html><body><nav><a href=\"/\">Home</a></nav><article><div class=\"chunks\">"
        "<div class=\"chunk grid\"><div class=\"chunk-body\"><p>CHUNKONE opens." PROSE "</p>"
        "<p>More of the first chunk." PROSE "</p></div><div class=\"rail\"></div></div>"
        "<div class=\"ad-slot\"><a href=\"/ad\">Advert</a></div>"
        "<div class=\"chunk grid\"><div class=\"chunk-body\"><p>CHUNKTWO goes on." PROSE "</p>"
        "<p>More of the second chunk." PROSE "</p><p>And more." PROSE "</p>"
        "<p>Still more." PROSE "</p></div><div class=\"rail\"></div></div>"
        "</div></article><footer>Copyright</footer></body></html>";
    worker_run r;
    const char *t = html_text_of(page, VF_RENDER_TEXT, &r);
    const char *one = strstr(t, "CHUNKONE"), *two = strstr(t, "CHUNKTWO");
    cr_assert(one && two && one < two, "%s", t);
    cr_assert_null(strstr(t, "Advert"), "%s", t);
    worker_run_free(&r);
}

Test(main_content, paragraphs_as_divs_beside_the_body_join_it_but_the_standfirst_does_not)
{
    static const char page[] =
        "<html><body><nav><a href=\"/\">Home</a></nav><section class=\"story\"><div>"
        "<div class=\"abstract\">STANDFIRSTTOKEN The ferry is back, and the town is glad of it.</div>"
        "<div class=\"lead-media\"><p class=\"para\">LEADTOKEN The ferry returned on Monday." PROSE
        "</p></div>"
        "<div class=\"para\">SHORTTOKEN Nobody expected it.</div>"
        "<div class=\"para\">DIVPARATOKEN Crews worked nights." PROSE "</div>"
        "<div class=\"read-all\"><div class=\"para\">More." PROSE "</div>"
        "<div class=\"para\">Even more." PROSE "</div><div class=\"para\">Again." PROSE "</div>"
        "<div class=\"para\">Further." PROSE "</div><div class=\"para\">Onward." PROSE "</div>"
        "<div class=\"para\">Nearly done." PROSE "</div><div class=\"para\">Last." PROSE "</div>"
        "<div class=\"para\">Really last." PROSE "</div></div>"
        "</div></section><footer>Copyright</footer></body></html>";
    worker_run r;
    const char *t = html_text_of(page, VF_RENDER_TEXT, &r);
    static const char *const kept[] = { "LEADTOKEN", "SHORTTOKEN", "DIVPARATOKEN", "Really last" };
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        cr_assert(strstr(t, kept[i]), "%s lost: %s", kept[i], t);
    cr_assert_null(strstr(t, "STANDFIRSTTOKEN"), "%s", t);
    worker_run_free(&r);
}
