/* Pagination of the redacted page text: boundaries, stability, hints. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/paginate.h"
#include "broker/judge/receipt_meta.h"

static char *slice(const char *t, const vf_page_cut *c)
{
    return strndup(t + c->begin, c->end - c->begin);
}

Test(paginate, short_text_is_one_page)
{
    vf_page_cut c;
    const char *t = "Hello world.";
    vf_paginate(t, strlen(t), 0, 100, &c);
    cr_assert_eq(c.total_chars, 12);
    cr_assert_not(c.truncated);
    cr_assert_eq(c.begin, 0);
    cr_assert_eq(c.end, strlen(t));
    cr_assert_eq(c.slice_chars, 12);
}

Test(paginate, cuts_on_paragraph_then_sentence_then_word)
{
    vf_page_cut c;
    const char *t = "First paragraph here.\n\nSecond one is longer than that.";
    vf_paginate(t, strlen(t), 0, 30, &c);
    cr_assert(c.truncated);
    char *s = slice(t, &c);
    cr_assert_str_eq(s, "First paragraph here.");
    free(s);
    cr_assert_eq(c.next_start_index, 23, "the next page starts at 'Second'");
    cr_assert_eq(t[c.next_start_index], 'S');

    const char *u = "One sentence. Two sentence. Three";
    vf_paginate(u, strlen(u), 0, 30, &c);
    s = slice(u, &c);
    cr_assert_str_eq(s, "One sentence. Two sentence.");
    free(s);

    const char *w = "aaaa bbbb cccc dddd";
    vf_paginate(w, strlen(w), 0, 12, &c);
    s = slice(w, &c);
    cr_assert_str_eq(s, "aaaa bbbb");
    free(s);
    cr_assert_eq(c.next_start_index, 10);
}

Test(paginate, no_boundary_cuts_hard_on_a_code_point)
{
    vf_page_cut c;
    const char *t = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"; /* five é, no blanks */
    vf_paginate(t, strlen(t), 0, 3, &c);
    cr_assert(c.truncated);
    cr_assert_eq(c.slice_chars, 3);
    cr_assert_eq(c.end - c.begin, 6);
    cr_assert_eq(c.next_start_index, 3);
    vf_paginate(t, strlen(t), 3, 3, &c);
    cr_assert_not(c.truncated);
    cr_assert_eq(c.begin, 6);
    cr_assert_eq(c.slice_chars, 2);
}

Test(paginate, pages_cover_the_text_and_repeat_identically)
{
    /* A long text of paragraphs and sentences. */
    char *t = malloc(200000);
    size_t n = 0;
    for (int i = 0; n < 190000; i++)
        n += (size_t)sprintf(t + n, "Sentence %d is here, with words. %s", i, i % 7 == 6 ? "\n\n" : "");
    size_t start = 0, total_slices = 0, pages = 0;
    vf_page_cut c, again;
    for (;;) {
        vf_paginate(t, n, start, 5000, &c);
        vf_paginate(t, n, start, 5000, &again);
        cr_assert_eq(memcmp(&c, &again, sizeof c), 0, "same page, same cut");
        cr_assert_leq(c.slice_chars, 5000);
        cr_assert_geq(c.slice_chars, 2500, "the cut lies in the second half of the window");
        total_slices += c.slice_chars;
        pages++;
        if (!c.truncated)
            break;
        cr_assert_gt(c.next_start_index, start);
        start = c.next_start_index;
    }
    cr_assert_gt(pages, 30);
    cr_assert_leq(total_slices, c.total_chars);
    cr_assert_geq(total_slices + 3 * pages, c.total_chars, "only separators (\" \\n\\n\") are skipped");
    free(t);
}

Test(paginate, start_past_the_end_is_empty_with_a_hint)
{
    vf_page_cut c;
    json_t *out = vf_receipt_paginate(json_string("abc def"), 50, 10, &c);
    cr_assert_not_null(out);
    cr_assert_eq(c.slice_chars, 0);
    cr_assert_not(c.truncated);
    cr_assert(strstr(json_string_value(out), "past the end"), "%s", json_string_value(out));
    json_decref(out);
}

Test(paginate, truncated_page_ends_with_one_continuation_line)
{
    vf_page_cut c;
    json_t *out = vf_receipt_paginate(json_string("Alpha beta.\n\nGamma delta epsilon zeta."), 0, 15, &c);
    const char *s = json_string_value(out);
    cr_assert(c.truncated);
    cr_assert(strncmp(s, "Alpha beta.\n\n[", 14) == 0, "%s", s);
    cr_assert(strstr(s, "start_index 13"), "%s", s);
    cr_assert_null(strchr(s + 13, '\n'), "the hint is one line");
    json_decref(out);
}
