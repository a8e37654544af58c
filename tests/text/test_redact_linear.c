/* Redaction and classification cost grows linearly with hostile input.
 *
 * Each adversarial input is one short unit (a trigger, a near-miss, or a run
 * of one character class) repeated to a given size. For every unit we time
 * the redactor (text and URL flavours) and the built-in classifier at two
 * sizes four times apart and assert the ratio of the medians stays well
 * below the quadratic 16x. Time is this thread's CPU time, so other
 * processes on a busy machine do not count. A quick screen at 64/256 KiB
 * runs first, so a quadratic pattern fails in seconds instead of minutes;
 * then the issue's 1 and 4 MiB sizes. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/judge/classify.h"
#include "broker/judge/redact.h"

#define RUNS 3
/* Linear is 4x; quadratic is 16x. 8x leaves room for cache and allocator effects. */
#define MAX_RATIO 8.0
/* Below this many seconds a difference is timer noise, not growth. */
#define SLACK_S 0.004

/* A unit is repeated to the size; a run unit ("a" etc.) becomes one long run. */
static const char *const units[] = {
    /* repeated triggers of every rule, and near-misses that fail late */
    "=authorization", "authorization=", "Authorization: ", "authorization:\"", "authorization: basic",
    "authorization: digest ", "=authorization=a", "?token=", "&token", "?token=.", "#access_token=!",
    ";sid=)", "Bearer ", "bearer bearer", "bearer .", "-bearer ", "a://", "a://x", "a://x@", "://@",
    "AKIA", "AKIAAAAAAAAAAAAA", "ASIA0", "AIza", "AIza-", "ghp_", "ghpx", "github_pat_", "github_pat",
    "xoxb-", "xox", "sk_live_", "rk_test_a", "sk-", "sk-a", "-sk-", "eyJ", "eyJa.", "eyJa.eyJ",
    "eyJa.eyJa", ".eyJ", "-----BEGIN ", "-----BEGIN A ", "-----BEGIN RSA PRIVATE KEY-----",
    "-----END ", "%41", "%4", "Fz9-", "Fz9-secret", "RnO5", "secret-VAL",
    /* spellings of a configured key that fail late (issue 13 item 16) */
    "&#0000000", "&#x", "\\u00", "\\u0046", "&#70;", "&lowbar;", "\\xF",
    "\xef\xbc\xa6\xef\xbd\x9a\xef\xbc\x99\xef\xbc\x8d", "F\xe2\x80\x8b" "z\xe2\x80\x8b" "9\xe2\x80\x8b" "-",
    "F\nz\n9\n-\ns", "467a392d7365637265742d56414c55", "&#xFF26;",
    /* long runs of each character class */
    "a", "A", "0", "=", ".", "-", "_", "/", "+", "~", " ", "\t", "\n", "\r\n", "?", "&", "#", ";",
    ":", "@", "%", "\"", "'", "\xc3\xa9", "\xe2\x80\x8b", "\xff",
};

static const char *const secrets[] = {"Fz9-secret-VALUE", "RnO5dGhpcw", "%41bc"};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *repeat(const char *unit, size_t size)
{
    char *buf = malloc(size + 1);
    cr_assert_not_null(buf);
    size_t ulen = strlen(unit);
    for (size_t o = 0; o < size; o += ulen)
        memcpy(buf + o, unit, size - o < ulen ? size - o : ulen);
    buf[size] = '\0';
    return buf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef enum { ENGINE_TEXT, ENGINE_URL, ENGINE_CLASSIFY } engine;

static const char *engine_name(engine e)
{
    return e == ENGINE_TEXT ? "redact_text" : e == ENGINE_URL ? "redact_url" : "classify";
}

static double run_once(const vf_redactor *r, const vf_classifier *c, engine e, const char *in, size_t n)
{
    double t0 = cpu_now();
    if (e == ENGINE_TEXT) {
        size_t out_len;
        char *out = vf_redact_text(r, in, n, &out_len);
        cr_assert_not_null(out);
        free(out);
    } else if (e == ENGINE_URL) {
        char *out = vf_redact_url(r, in);
        cr_assert_not_null(out);
        free(out);
    } else {
        vf_classify_input ci = {.http_status = 200, .content_type = "text/plain", .text = in, .text_len = n,
                                .must_contain = "needle-not-there", .min_chars = 40};
        char detail[256];
        size_t chars;
        (void)vf_classify(c, &ci, detail, sizeof detail, &chars);
    }
    return cpu_now() - t0;
}

static double median_time(const vf_redactor *r, const vf_classifier *c, engine e, const char *in,
                          size_t size)
{
    double t[RUNS];
    for (int k = 0; k < RUNS; k++)
        t[k] = run_once(r, c, e, in, size);
    qsort(t, RUNS, sizeof t[0], cmp_double);
    return t[RUNS / 2];
}

/* The same unit repeated to two sizes, built once and shared by the engines. */
typedef struct {
    const char *unit;
    size_t small, big;
    char *small_in, *big_in;
} sample;

static void sample_build(sample *s, const char *unit, size_t small, size_t big)
{
    *s = (sample){unit, small, big, repeat(unit, small), repeat(unit, big)};
}

static void sample_free(sample *s)
{
    free(s->small_in);
    free(s->big_in);
}

static bool grows_linearly(const vf_redactor *r, const vf_classifier *c, engine e, const sample *s,
                           double *ratio_out)
{
    const char *unit = s->unit;
    size_t small = s->small, big = s->big;
    double ts = median_time(r, c, e, s->small_in, small);
    double tb = median_time(r, c, e, s->big_in, big);
    if (tb > MAX_RATIO * ts + SLACK_S) {
        /* One more look before calling it: a burst of load on a shared
         * machine can spoil one set of medians, a quadratic rule spoils all. */
        ts = median_time(r, c, e, s->small_in, small);
        tb = median_time(r, c, e, s->big_in, big);
    }
    double ratio = tb / (ts > 1e-6 ? ts : 1e-6);
    *ratio_out = tb > SLACK_S ? ratio : 0;
    if (getenv("VF_LINEAR_VERBOSE"))
        cr_log_info("%s \"%s\" %zu KiB %.4f s, %zu KiB %.4f s", engine_name(e), unit, small >> 10, ts, big >> 10, tb);
    bool ok = tb <= MAX_RATIO * ts + SLACK_S;
    if (!ok)
        cr_log_error("%s on %zu KiB of repeated \"%s\": %.4f s, %zu KiB: %.4f s (ratio %.1f, linear is %.0f)",
                     engine_name(e), big >> 10, unit, tb, small >> 10, ts, ratio, (double)big / (double)small);
    return ok;
}

/* Counts the unit/engine pairs that grow faster than linearly: first a
 * quick screen at screen_small and 4x (a quadratic rule fails there in
 * seconds), then full_small and 4x. *worst: the largest full ratio. */
static size_t superlinear_pairs(const char *const *list, size_t n, size_t screen_small, size_t full_small,
                                engine last, double *worst)
{
    char err[256] = "";
    vf_redactor *r = vf_redactor_new(secrets, sizeof secrets / sizeof secrets[0], err, sizeof err);
    cr_assert_not_null(r, "%s", err);
    vf_classifier *c = vf_classifier_new(NULL, 0, err, sizeof err);
    cr_assert_not_null(c, "%s", err);
    double ratio;
    size_t failures = 0;
    for (size_t u = 0; u < n; u++) {
        sample screen, full;
        sample_build(&screen, list[u], screen_small, 4 * screen_small);
        sample_build(&full, list[u], full_small, 4 * full_small);
        for (engine e = ENGINE_TEXT; e <= last; e++) {
            /* classification reads valid UTF-8 only (the worker guarantees it) */
            if (e == ENGINE_CLASSIFY && strchr(list[u], '\xff'))
                continue;
            if (!grows_linearly(r, c, e, &screen, &ratio)) {
                failures++;
                continue;
            }
            /* URLs are bounded long before megabytes; screen them only. */
            if (e == ENGINE_URL)
                continue;
            if (!grows_linearly(r, c, e, &full, &ratio))
                failures++;
            if (ratio > *worst)
                *worst = ratio;
        }
        sample_free(&screen);
        sample_free(&full);
    }
    vf_classifier_free(c);
    vf_redactor_free(r);
    return failures;
}

/* Criterion's own limit does not follow meson's --timeout-multiplier; an
 * ASan build runs this several times slower (193 s of 300 on a CI host). */
#if defined(__SANITIZE_ADDRESS__)
#define LINEAR_TEST_TIMEOUT_S 900
#else
#define LINEAR_TEST_TIMEOUT_S 300
#endif

Test(redact_linear, every_pattern_1m_to_4m, .timeout = LINEAR_TEST_TIMEOUT_S)
{
    double worst = 0;
    size_t failures = superlinear_pairs(units, sizeof units / sizeof units[0], 64 << 10, 1 << 20, ENGINE_CLASSIFY,
                                        &worst);
    cr_log_info("worst 4 MiB / 1 MiB CPU-time ratio: %.2f (linear is 4)", worst);
    cr_assert_eq(failures, 0, "%zu pattern/engine pairs grew faster than linearly (see log)", failures);
}

/* Base64 of a configured key, at each byte alignment, repeated: one long
 * base64 run with a hit every few bytes. Every hit widens to the whole run,
 * and the scan looks at each hit inside a replaced span, so measuring the
 * run per hit was quadratic (fuzz_redact_linear's "U0MWJj": 64 KiB took
 * 16x the time of 16 KiB). The screen is small so the old cost fails on
 * the ratio within seconds instead of running into the timeout, and the
 * full sizes stop at 1 MiB: this test shares the suite's time with the one
 * above. Only the redactor reads keys, so classification is not timed. */
static const char *const b64_units[] = {
    "U0MWJj", "JTQxYm", "lNDFiY",                                          /* "%41bc" */
    "Rno5LXNlY3JldC1WQUxVR", "Z6OS1zZWNyZXQtVkFMVU", "Gejktc2VjcmV0LVZBTFVF", /* "Fz9-secret-VALUE" */
    "Um5PNWRHaHBjd", "Sbk81ZEdocGN3",                                      /* "RnO5dGhpcw" */
    "U0MWJj+", "U0MWJj_", "U0MWJj=", "U0MWJ", "AU0MWJjA",                 /* mixed, padded, near-miss */
};

Test(redact_linear, base64_runs_of_a_key_256k_to_1m, .timeout = LINEAR_TEST_TIMEOUT_S)
{
    double worst = 0;
    size_t failures = superlinear_pairs(b64_units, sizeof b64_units / sizeof b64_units[0], 8 << 10, 256 << 10,
                                        ENGINE_URL, &worst);
    cr_log_info("worst 1 MiB / 256 KiB CPU-time ratio: %.2f (linear is 4)", worst);
    cr_assert_eq(failures, 0, "%zu base64 unit/engine pairs grew faster than linearly (see log)", failures);
}
