/* The compact attribute store the HTML tree reads its attributes from. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "worker/content/attr_store.h"
#include "worker/content/extract_html.h"

static char *store(const char *const *pairs)
{
    size_t n = vf_attr_run_size(pairs);
    cr_assert_gt(n, 0);
    char *run = malloc(n);
    cr_assert_not_null(run);
    vf_attr_run_write(run, pairs);
    return run;
}

Test(attr_store, finds_values_by_name_ignoring_case_and_keeps_empty_values)
{
    const char *pairs[] = { "class", "story-card lead", "hidden", NULL, "href", "/a?b=1&c=2", NULL };
    char *run = store(pairs);
    cr_assert_str_eq(vf_attr_find(run, "CLASS"), "story-card lead");
    cr_assert_str_eq(vf_attr_find(run, "hidden"), "");
    cr_assert_str_eq(vf_attr_find(run, "href"), "/a?b=1&c=2");
    cr_assert_null(vf_attr_find(run, "id"));
    cr_assert_null(vf_attr_find(run, "hid"));
    free(run);
}

Test(attr_store, no_attributes_store_nothing)
{
    const char *none[] = { NULL };
    cr_assert_eq(vf_attr_run_size(none), 0);
    cr_assert_eq(vf_attr_run_size(NULL), 0);
    cr_assert_null(vf_attr_find(NULL, "class"));
}

/* Through the parser: what readers ask for still arrives (hidden text is
 * dropped, a link keeps its decoded href). */
Test(attr_store, parsed_pages_still_answer_attribute_readers)
{
    const char *html = "<html><body><p>shown</p><p hidden>secret-token</p>"
                       "<p><a href=\"https://example.test/a?b=1&amp;c=2\">link</a></p>"
                       "<div style=\"display:none\">also-hidden</div></body></html>";
    vf_html_opts o = { .markdown = true, .whole_page = true, .links = VF_LINKS_INLINE, .max_out = 4096 };
    size_t n;
    char *t = vf_html_extract(html, strlen(html), &o, NULL, &n);
    cr_assert_not_null(t);
    cr_assert_not_null(strstr(t, "shown"));
    cr_assert_null(strstr(t, "secret-token"), "%s", t);
    cr_assert_null(strstr(t, "also-hidden"), "%s", t);
    cr_assert_not_null(strstr(t, "(https://example.test/a?b=1&c=2)"), "%s", t);
    free(t);
}

