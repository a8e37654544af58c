/* Post-processing of a page is bounded by the attempt deadline: past it the
 * attempt fails with a detail that names the budget, and in time the page
 * is replaced by its redacted form (what the caller will receive). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "broker/lookup/page_budget.h"
#include "ipc/ipc_frame.h"

static vf_redactor *make(void)
{
    static const char *const keys[] = {"Zq7-provider-key"};
    char err[128];
    vf_redactor *r = vf_redactor_new(keys, 1, err, sizeof err);
    cr_assert_not_null(r, "%s", err);
    return r;
}

static vf_fetch_outcome page(const char *text)
{
    vf_fetch_outcome f;
    memset(&f, 0, sizeof f);
    f.http_status = 200;
    f.text = strdup(text);
    f.text_len = strlen(text);
    return f;
}

Test(page_budget, past_deadline_fails_the_attempt_with_a_clear_detail)
{
    vf_redactor *r = make();
    vf_fetch_outcome f = page("token list: ?token=abc and Zq7-provider-key again");
    cr_assert_not(vf_page_redact_within(r, &f, 1));
    cr_assert_eq(f.forced, VF_OUTCOME_TRANSPORT_ERROR);
    cr_assert_null(f.text);
    cr_assert(strstr(f.detail, "exceeded the attempt deadline"), "detail: %s", f.detail);
    vf_fetch_outcome_free(&f);
    vf_redactor_free(r);
}

Test(page_budget, in_time_the_page_is_replaced_by_its_redacted_form)
{
    vf_redactor *r = make();
    vf_fetch_outcome f = page("see ?token=abc123 and Zq7-provider-key");
    cr_assert(vf_page_redact_within(r, &f, vf_now_ms() + 60000));
    cr_assert_eq(f.forced, VF_OUTCOME_OK);
    cr_assert_str_eq(f.text, "see ?token=[REDACTED] and [REDACTED]");
    cr_assert_eq(f.text_len, strlen(f.text));
    vf_fetch_outcome_free(&f);
    vf_redactor_free(r);
}

/* The first redaction sees the key split by controls and bidi marks; the
 * cleaning drops them and joins it, so the page is redacted again. */
Test(page_budget, a_secret_joined_by_the_cleaning_is_redacted)
{
    vf_redactor *r = make();
    vf_fetch_outcome f = page("key Zq7-pro\x1bvider\xe2\x80\x8e-key and Zq7-\xe2\x80\xaeprovider-\x7fkey\r\nend");
    cr_assert(vf_page_redact_within(r, &f, vf_now_ms() + 60000));
    cr_assert_str_eq(f.text, "key [REDACTED] and [REDACTED]\nend");
    cr_assert_eq(f.text_len, strlen(f.text));
    vf_fetch_outcome_free(&f);
    vf_redactor_free(r);
}

/* A marker set by the first redaction is scanned again with its
 * neighbours: what the old second pass gave, it still gives. */
Test(page_budget, redacted_text_is_scanned_again)
{
    vf_redactor *r = make();
    const char *in = "a Zq7-provider-key?token=x Zq7-provider-keyZq7-provider-key b";
    vf_fetch_outcome f = page(in);
    cr_assert(vf_page_redact_within(r, &f, vf_now_ms() + 60000));
    size_t once_len = 0;
    char *once = vf_redact_text(r, in, strlen(in), &once_len);
    size_t twice_len = 0;
    char *twice = vf_redact_text(r, once, once_len, &twice_len);
    cr_assert_str_eq(f.text, twice);
    free(once);
    free(twice);
    vf_fetch_outcome_free(&f);
    vf_redactor_free(r);
}

/* The page holds this secret only once the first redaction has written
 * its marker (whose "ED]" starts it): text the first redaction changed is
 * scanned again even when the cleaning changes nothing. */
Test(page_budget, a_secret_completed_by_a_marker_is_redacted)
{
    static const char *const keys[] = {"ED]-tail-9876543210"};
    char err[128];
    vf_redactor *r = vf_redactor_new(keys, 1, err, sizeof err);
    cr_assert_not_null(r, "%s", err);
    vf_fetch_outcome f = page("x AKIAABCDEFGHIJKLMNOP-tail-9876543210 y");
    cr_assert(vf_page_redact_within(r, &f, vf_now_ms() + 60000));
    cr_assert_str_eq(f.text, "x [REDACT[REDACTED] y");
    vf_fetch_outcome_free(&f);
    vf_redactor_free(r);
}

/* Clean text with nothing to redact is neither copied nor changed. */
Test(page_budget, a_clean_page_keeps_its_buffer)
{
    vf_redactor *r = make();
    vf_fetch_outcome f = page("Paragraph 0: nothing secret here.\n\tcaf\xc3\xa9 \xe4\xb8\xad");
    char *before = f.text;
    char *copy = strdup(f.text);
    cr_assert(vf_page_redact_within(r, &f, vf_now_ms() + 60000));
    cr_assert_eq(f.text, before);
    cr_assert_str_eq(f.text, copy);
    free(copy);
    vf_fetch_outcome_free(&f);
    vf_redactor_free(r);
}

Test(page_budget, a_slow_fetch_still_leaves_the_minimum_for_post_processing)
{
    cr_assert_eq(vf_postprocess_deadline(1000, 999), 999 + VF_POSTPROCESS_MIN_MS);
    cr_assert_eq(vf_postprocess_deadline(100000, 1000), 100000);
}
