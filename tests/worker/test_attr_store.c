/* The compact attribute store the HTML tree reads its attributes from. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "worker/content/attr_store.h"
#include "worker/content/extract_html.h"

static const char *store(vf_attr_arena **a, const char *const *pairs)
{
    bool oom = true;
    const char *run = vf_attr_store(a, (const xmlChar *const *)pairs, &oom);
    cr_assert_not(oom);
    return run;
}

Test(attr_store, finds_values_by_name_ignoring_case_and_keeps_empty_values)
{
    vf_attr_arena *a = NULL;
    const char *pairs[] = { "class", "story-card lead", "hidden", NULL, "href", "/a?b=1&c=2", NULL };
    const char *run = store(&a, pairs);
    cr_assert_str_eq(vf_attr_find(run, "CLASS"), "story-card lead");
    cr_assert_str_eq(vf_attr_find(run, "hidden"), "");
    cr_assert_str_eq(vf_attr_find(run, "href"), "/a?b=1&c=2");
    cr_assert_null(vf_attr_find(run, "id"));
    cr_assert_null(vf_attr_find(run, "hid"));
    vf_attr_arena_free(a);
}

Test(attr_store, no_attributes_store_nothing)
{
    vf_attr_arena *a = NULL;
    const char *none[] = { NULL };
    bool oom = true;
    cr_assert_null(vf_attr_store(&a, (const xmlChar *const *)none, &oom));
    cr_assert_not(oom);
    cr_assert_null(vf_attr_store(&a, NULL, &oom));
    cr_assert_null(vf_attr_find(NULL, "class"));
    cr_assert_null(a);
}

/* Runs stay valid as the arena grows past its chunks, including a value
 * larger than a chunk (a data: URI in src). */
Test(attr_store, earlier_runs_survive_many_chunks_and_huge_values)
{
    vf_attr_arena *a = NULL;
    enum { N = 20000 };
    const char **runs = calloc(N, sizeof *runs);
    cr_assert_not_null(runs);
    char id[32];
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "card-%d", i);
        const char *pairs[] = { "id", id, "class", "c", NULL };
        runs[i] = store(&a, pairs);
    }
    size_t big_len = 300u << 10;
    char *big = malloc(big_len + 1);
    cr_assert_not_null(big);
    memset(big, 'x', big_len);
    big[big_len] = '\0';
    const char *pairs[] = { "src", big, NULL };
    const char *big_run = store(&a, pairs);
    for (int i = 0; i < N; i += 997) {
        snprintf(id, sizeof id, "card-%d", i);
        cr_assert_str_eq(vf_attr_find(runs[i], "id"), id);
    }
    cr_assert_eq(strlen(vf_attr_find(big_run, "src")), big_len);
    free(big);
    free(runs);
    vf_attr_arena_free(a);
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

