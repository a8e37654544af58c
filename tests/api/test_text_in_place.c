/* The broker's page text path without copies (issue 15, broker memory):
 * redaction and cleaning leave an unchanged page where it is, and only the
 * page asked for becomes JSON. Each is held to the copying path it replaced,
 * byte for byte, on adversarial mixtures: secrets and token shapes across
 * the page cut, multibyte characters at it, controls, invalid bytes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/receipt.h"
#include "broker/judge/receipt_meta.h"
#include "broker/judge/redact.h"
#include "broker/judge/redact_buf.h"
#include "broker/judge/safe_text.h"
#include "broker/judge/utf8_text.h"
#include "broker/lookup/page_budget.h"

#define SECRET "Zq7-provider-key"

static const char *const pieces[] = {
    "plain words ", "Paragraph 7: the river by the stone. ", "\n\n", "\n", ". ", " ", "\t",
    SECRET, "Zq7-provider", "-key", "WnE3LXByb3ZpZGVyLWtleQ", "Zq7%2Dprovider%2Dkey",
    "?token=abc123&x=1 ", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345 ",
    "AKIAIOSFODNN7EXAMPLE ", "ghp_0123456789abcdefghijklmnopqrstuvwxyz ",
    "caf\xc3\xa9 ", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "\xf0\x9f\x98\x80", "\xe3\x80\x82",
    "\xef\xbc\x81", "\r\n", "\r", "\xe2\x80\xa8", "\xe2\x80\xae", "\xc2\x85", "\x1b[31m",
    "\xff", "\xc3", "\xed\xa0\x80", "\0",
};
#define N_PIECES (sizeof pieces / sizeof pieces[0])

static vf_redactor *make(void)
{
    static const char *const keys[] = { SECRET };
    char err[128];
    vf_redactor *r = vf_redactor_new(keys, 1, err, sizeof err);
    cr_assert_not_null(r, "%s", err);
    return r;
}

/* A random mixture of pieces (NUL and invalid bytes included: the copying
 * functions take them, so the in-place ones must agree on them too). */
static char *mixture(unsigned *seed, size_t n_pieces, size_t *len)
{
    size_t cap = n_pieces * 64 + 1, o = 0;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    for (size_t k = 0; k < n_pieces; k++) {
        const char *p = pieces[rand_r(seed) % N_PIECES];
        size_t pl = p[0] ? strlen(p) : 1;
        memcpy(s + o, p, pl);
        o += pl;
    }
    s[o] = '\0';
    *len = o;
    return s;
}

static char *dup_bytes(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    cr_assert_not_null(d);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

Test(text_in_place, borrowing_buffer_copies_only_when_output_departs)
{
    const char *src = "abcdef";
    vf_rbuf b;
    vf_rbuf_init_borrowing(&b, src, 6);
    vf_rbuf_put(&b, src, 2);
    vf_rbuf_put(&b, src + 2, 4);
    cr_assert(vf_rbuf_is_borrowed(&b));
    cr_assert_null(b.data, "nothing copied while the output is the source");
    size_t n = 0;
    char *out = vf_rbuf_finish(&b, &n);
    cr_assert_str_eq(out, "abcdef");
    free(out);

    vf_rbuf_init_borrowing(&b, src, 6);
    vf_rbuf_put(&b, src, 2);
    vf_rbuf_put_redacted(&b);
    vf_rbuf_put(&b, src + 4, 2);
    cr_assert_not(vf_rbuf_is_borrowed(&b));
    out = vf_rbuf_finish(&b, &n);
    cr_assert_str_eq(out, "ab" VF_REDACTED "ef");
    cr_assert_eq(n, strlen(out));
    free(out);
}

Test(text_in_place, redaction_matches_the_copying_path_and_keeps_clean_pages)
{
    vf_redactor *r = make();
    unsigned seed = 15;
    unsigned kept = 0, replaced = 0;
    for (int round = 0; round < 3000; round++) {
        size_t len;
        char *in = mixture(&seed, 1 + (size_t)round % 40, &len);
        size_t want_len = 0;
        char *want = vf_redact_text(r, in, len, &want_len);
        cr_assert_not_null(want);
        char *text = dup_bytes(in, len), *before = text;
        size_t text_len = len;
        cr_assert_eq(vf_redact_text_in_place(r, &text, &text_len, 0), VF_REDACT_OK);
        cr_assert_eq(text_len, want_len, "round %d: %zu vs %zu bytes", round, text_len, want_len);
        cr_assert_eq(memcmp(text, want, want_len + 1), 0, "round %d differs", round);
        if (want_len == len && memcmp(want, in, len) == 0) {
            cr_assert_eq(text, before, "round %d: an unchanged page was copied", round);
            kept++;
        } else {
            replaced++;
        }
        free(text);
        free(want);
        free(in);
    }
    cr_assert_gt(kept, 100, "the corpus must have pages with nothing to redact");
    cr_assert_gt(replaced, 100, "and pages with something to redact");
    vf_redactor_free(r);
}

Test(text_in_place, cleaning_matches_the_copying_path)
{
    unsigned seed = 11;
    for (int round = 0; round < 3000; round++) {
        size_t len;
        char *in = mixture(&seed, 1 + (size_t)round % 30, &len);
        /* UTF-8 repair */
        size_t want_len = 0;
        char *want = vf_utf8_sanitize(in, len, &want_len);
        char *text = dup_bytes(in, len), *before = text;
        size_t text_len = len;
        cr_assert_eq(vf_utf8_sanitize_in_place(&text, &text_len), 0);
        cr_assert_eq(text_len, want_len);
        cr_assert_eq(memcmp(text, want, want_len + 1), 0, "sanitize, round %d", round);
        if (vf_utf8_is_clean(in, len))
            cr_assert_eq(text, before);
        free(want);
        /* model-safe text, on what the sanitiser made of it */
        want = vf_model_text_clean(text, text_len, &want_len);
        char *valid = text;
        before = valid;
        bool was_clean = vf_model_text_is_clean(valid, text_len);
        cr_assert_eq(vf_model_text_clean_in_place(&valid, &text_len), 0);
        cr_assert_eq(text_len, want_len);
        cr_assert_eq(memcmp(valid, want, want_len + 1), 0, "model clean, round %d", round);
        if (was_clean)
            cr_assert_eq(valid, before);
        free(valid);
        free(want);
        free(in);
    }
}

/* What the broker did before: every step a fresh copy, the whole text made a
 * JSON string, then cut to the page asked for. */
static json_t *whole_text_page(const vf_redactor *r, const char *in, size_t len, size_t start, size_t max,
                               vf_page_cut *cut)
{
    size_t l1, l2, l3, l4;
    char *red = vf_redact_text(r, in, len, &l1);
    char *clean = vf_model_text_clean(red, l1, &l2);
    char *red2 = vf_redact_text(r, clean, l2, &l3);
    char *valid = vf_utf8_sanitize(red2, l3, &l4);
    json_t *whole = json_stringn_nocheck(valid, l4);
    free(red);
    free(clean);
    free(red2);
    free(valid);
    return vf_receipt_paginate(whole, start, max, cut);
}

static json_t *receipt_of(json_t *result)
{
    return json_object_get(json_array_get(json_object_get(result, "content"), 0), "json");
}

static const char *text_of(json_t *result)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(result, "content"), 1), "text"));
}

/* The broker's path now: redacted, cleaned and sanitized in place
 * (page_budget, redact_page; redacted again only when changed), then only
 * the page becomes JSON. */
static json_t *lookup_page(const vf_redactor *r, const char *in, size_t len, size_t start, size_t max)
{
    vf_fetch_outcome f;
    memset(&f, 0, sizeof f);
    f.http_status = 200;
    /* the provider hands over valid UTF-8 (direct_provider.c keep_final) */
    f.text = vf_utf8_sanitize(in, len, &f.text_len);
    cr_assert(vf_page_redact_within(r, &f, 0));
    vf_attempt_record log[1] = { { .provider = "direct", .outcome = VF_OUTCOME_OK, .http_status = 200,
                                   .detail = "usable content" } };
    vf_receipt_input ri = {
        .url = "http://127.0.0.1/page", .max_attempts = 1, .providers_available = 1, .log = log,
        .n_attempts = 1, .provider_used = "direct", .failure = VF_FAIL_NONE, .text = f.text,
        .text_len = f.text_len, .text_is_redacted = true, .max_chars = max, .start_index = start,
        .queue_ms = -1,
    };
    json_t *res = vf_tool_result_build(&ri, r);
    vf_fetch_outcome_free(&f);
    cr_assert_not_null(res);
    return res;
}

static void expect_same_page(const vf_redactor *r, const char *in, size_t len, size_t start, size_t max,
                             const char *what)
{
    /* the old path started from the same provider-sanitised text */
    size_t vlen;
    char *valid = vf_utf8_sanitize(in, len, &vlen);
    vf_page_cut cut;
    json_t *want = whole_text_page(r, valid, vlen, start, max, &cut);
    free(valid);
    json_t *got = lookup_page(r, in, len, start, max);
    json_t *rc = receipt_of(got);
    cr_assert_str_eq(text_of(got), json_string_value(want), "%s: page text differs", what);
    cr_assert_eq(json_integer_value(json_object_get(rc, "total_chars")), (json_int_t)cut.total_chars, "%s", what);
    cr_assert_eq(json_integer_value(json_object_get(rc, "start_index")), (json_int_t)cut.start_index, "%s", what);
    cr_assert_eq(json_is_true(json_object_get(rc, "truncated")), cut.truncated, "%s", what);
    json_t *next = json_object_get(rc, "next_start_index");
    if (cut.truncated)
        cr_assert_eq(json_integer_value(next), (json_int_t)cut.next_start_index, "%s", what);
    cr_assert_eq(json_integer_value(json_object_get(rc, "content_chars")),
                 (json_int_t)vf_utf8_count(json_string_value(want), json_string_length(want)), "%s", what);
    cr_assert_null(strstr(text_of(got), "Zq7-provider-key"), "%s: the secret got out", what);
    json_decref(want);
    json_decref(got);
}

Test(text_in_place, page_from_the_in_place_path_equals_the_whole_text_path)
{
    vf_redactor *r = make();
    unsigned seed = 4;
    for (int round = 0; round < 1500; round++) {
        size_t len;
        char *in = mixture(&seed, 2 + (size_t)round % 50, &len);
        size_t max = 1 + (size_t)rand_r(&seed) % 80, start = (size_t)rand_r(&seed) % 120;
        char what[64];
        snprintf(what, sizeof what, "round %d (start %zu, max %zu)", round, start, max);
        expect_same_page(r, in, len, start, max, what);
        free(in);
    }
    vf_redactor_free(r);
}

Test(text_in_place, secret_straddling_the_cut_and_multibyte_at_the_cut)
{
    vf_redactor *r = make();
    /* the secret begins a few characters before max_chars and ends after it */
    for (size_t before = 1; before < 24; before++) {
        char in[256];
        size_t n = 0;
        for (size_t k = 0; k < before; k++)
            in[n++] = 'a';
        n += (size_t)snprintf(in + n, sizeof in - n, "%s tail \xc3\xa9\xe6\x97\xa5 end", SECRET);
        for (size_t max = before; max < before + 20; max++) {
            char what[64];
            snprintf(what, sizeof what, "secret at %zu, max %zu", before, max);
            expect_same_page(r, in, n, 0, max, what);
            expect_same_page(r, in, n, 2, max, what);
        }
    }
    /* multibyte characters on every possible cut */
    const char *wide = "\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\xf0\x9f\x98\x80 caf\xc3\xa9\xe3\x80\x82\xe6\x97\xa5\xe3\x80\x82 x";
    for (size_t max = 1; max < 20; max++)
        for (size_t start = 0; start < 20; start++)
            expect_same_page(r, wide, strlen(wide), start, max, "multibyte");
    vf_redactor_free(r);
}
