/* libFuzzer target for the broker's text engines. Not part of the default
 * build. By hand:
 *   clang -std=c17 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -I. \
 *     tests/text/fuzz_redact.c broker/redact*.c broker/classify.c broker/utf8_text.c \
 *     -lpcre2-8 -o /tmp/fuzz_redact && /tmp/fuzz_redact -max_total_time=30
 * Properties checked on every input (a violation aborts, which libFuzzer
 * reports as a crash):
 *  - vf_redact_text / vf_redact_url return a NUL-terminated buffer of the
 *    stated length, and no configured secret occurs in it;
 *  - vf_utf8_sanitize returns valid UTF-8 without NUL, stable when applied
 *    again, and vf_utf8_count agrees with a byte-by-byte count;
 *  - vf_classify returns a known outcome and a NUL-terminated detail;
 *  - the broker's page path (vf_redact_page_text: redacted a second time
 *    only when redaction or cleaning changed the text) gives the bytes of
 *    redact, clean, redact again, sanitize, every step on a fresh copy. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/classify.h"
#include "broker/judge/redact.h"
#include "broker/judge/redact_page.h"
#include "broker/judge/safe_text.h"
#include "broker/judge/text_fold.h"
#include "broker/judge/utf8_text.h"

/* No '[' or ']': a secret then cannot straddle an inserted "[REDACTED]". */
static const char *const secrets[] = {"Fz9-secret-VALUE", "s p a c e", "%41bc", "Q7"};
#define N_SECRETS (sizeof secrets / sizeof secrets[0])

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "property violated: %s\n", what);
        abort();
    }
}

static void check_redacted(const char *out, size_t n)
{
    check(out != NULL, "redaction returned NULL");
    check(out[n] == '\0', "output not NUL-terminated");
    for (size_t k = 0; k < N_SECRETS; k++)
        check(memmem(out, n, secrets[k], strlen(secrets[k])) == NULL, "a configured secret survived");
}

static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char b = s[i];
        size_t need;
        unsigned char lo = 0x80, hi = 0xbf;
        if (b == 0)
            return 0;
        if (b < 0x80) {
            i++;
            continue;
        }
        if (b >= 0xc2 && b <= 0xdf)
            need = 1;
        else if (b >= 0xe0 && b <= 0xef)
            need = 2, lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
        else if (b >= 0xf0 && b <= 0xf4)
            need = 3, lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
        else
            return 0;
        if (n - i - 1 < need || s[i + 1] < lo || s[i + 1] > hi)
            return 0;
        for (size_t k = 2; k <= need; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
        i += need + 1;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static vf_redactor *r;
    static vf_classifier *c;
    char err[256];
    if (!r) {
        r = vf_redactor_new(secrets, N_SECRETS, err, sizeof err);
        c = vf_classifier_new(NULL, 0, err, sizeof err);
        check(r && c, err);
    }

    size_t n = 0;
    char *out = vf_redact_text(r, (const char *)data, size, &n);
    check_redacted(out, n);
    /* The broker's in-place redaction gives the same bytes, and leaves a
     * text with nothing to redact where it was. */
    char *text = malloc(size + 1), *before = text;
    check(text != NULL, "malloc");
    memcpy(text, data, size);
    text[size] = '\0';
    size_t text_len = size;
    check(vf_redact_text_in_place(r, &text, &text_len, 0) == VF_REDACT_OK, "in-place redaction failed");
    check(text_len == n && memcmp(text, out, n + 1) == 0, "in-place redaction differs");
    check(text == before || n != size || memcmp(out, data, size) != 0, "an unchanged text was copied");
    free(text);
    free(out);

    text = malloc(size + 1);
    check(text != NULL, "malloc");
    memcpy(text, data, size);
    text[size] = '\0';
    text_len = size;
    check(vf_redact_page_text(r, &text, &text_len, 0) == VF_REDACT_OK, "page redaction failed");
    size_t l1 = 0, l2 = 0, l3 = 0, l4 = 0;
    char *red = vf_redact_text(r, (const char *)data, size, &l1);
    char *cleaned = red ? vf_model_text_clean(red, l1, &l2) : NULL;
    char *red2 = cleaned ? vf_redact_text(r, cleaned, l2, &l3) : NULL;
    char *page = red2 ? vf_utf8_sanitize(red2, l3, &l4) : NULL;
    check(page != NULL, "whole-text page path failed");
    check(text_len == l4 && memcmp(text, page, l4 + 1) == 0, "page redaction differs from the two-pass path");
    check_redacted(text, text_len);
    free(red);
    free(cleaned);
    free(red2);
    free(page);
    free(text);

    char *url = malloc(size + 1);
    check(url != NULL, "malloc");
    memcpy(url, data, size);
    url[size] = '\0';
    out = vf_redact_url(r, url);
    check_redacted(out, out ? strlen(out) : 0);
    free(out);
    free(url);

    size_t clean_len = 0, again_len = 0;
    char *clean = vf_utf8_sanitize((const char *)data, size, &clean_len);
    check(clean != NULL, "sanitize returned NULL");
    check(valid_utf8((const unsigned char *)clean, clean_len), "sanitize produced invalid UTF-8");
    char *again = vf_utf8_sanitize(clean, clean_len, &again_len);
    check(again && again_len == clean_len && memcmp(again, clean, clean_len) == 0, "sanitize not stable");
    free(again);
    size_t naive = 0;
    for (size_t i = 0; i < clean_len; i++)
        naive += ((unsigned char)clean[i] & 0xC0) != 0x80;
    check(vf_utf8_count(clean, clean_len) == naive, "count disagrees");

    static const char *const types[] = {"text/html", "image/png", NULL, "application/ld+json"};
    vf_classify_input in = {size ? 100 + data[0] % 300 : 200, types[size % 4], clean, clean_len,
                            size > 3 ? "ab" : NULL, 40};
    char detail[160];
    size_t chars = 0;
    vf_outcome oc = vf_classify(c, &in, detail, sizeof detail, &chars);
    check(oc >= VF_OUTCOME_OK && oc <= VF_OUTCOME_MALFORMED_RESPONSE, "unknown outcome");
    check(memchr(detail, '\0', sizeof detail) != NULL, "detail not terminated");
    check(chars == naive, "content_chars wrong");

    /* must_contain's windowed fold search agrees with memmem over the whole
     * folded text, for a needle cut from the input's own fold. */
    size_t ft = 0;
    char *folded = vf_fold_text(clean, clean_len, &ft);
    check(folded != NULL, "fold returned NULL");
    size_t from = ft ? data[0] % ft : 0, fn = ft ? 1 + (size > 1 ? data[1] : 0) % (ft - from) : 0;
    bool want = fn == 0 || memmem(folded, ft, folded + from, fn) != NULL, found = !want;
    check(want, "a needle from the text must be found");
    check(vf_fold_contains_window(clean, clean_len, folded + from, fn, 1 + size % 7, &found) && found == want,
          "windowed fold search disagrees");
    static const char other[] = "zz q";
    want = memmem(folded, ft, other, 4) != NULL;
    check(vf_fold_contains_window(clean, clean_len, other, 4, 3, &found) && found == want,
          "windowed fold search disagrees on a foreign needle");
    free(folded);
    free(clean);
    return 0;
}
