/* libFuzzer target: flags inputs on which redaction grows faster than
 * linearly. The fuzzer's input is a unit; it is repeated to 16 KiB and to
 * 64 KiB and the redactor's CPU time compared (best of three each, this
 * thread only). Linear is 4x; a rule that rescans a run from every trigger
 * inside it is 16x. Above MAX_RATIO (plus a slack for timer noise) the
 * target aborts, which libFuzzer reports with the input. Built by
 * tests/fuzz/run.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/judge/redact.h"

#define SMALL (16u << 10)
#define BIG (64u << 10)
#define MAX_RATIO 10.0
#define SLACK_S 0.010

static const char *const secrets[] = {"Fz9-secret-VALUE", "%41bc"};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double best_time(const vf_redactor *r, const char *in, size_t n)
{
    double best = 1e9;
    for (int k = 0; k < 3; k++) {
        double t0 = cpu_now();
        size_t out_len;
        char *out = vf_redact_text(r, in, n, &out_len);
        double t = cpu_now() - t0;
        if (!out)
            abort();
        free(out);
        if (t < best)
            best = t;
    }
    return best;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static vf_redactor *r;
    static char *buf;
    if (!r) {
        char err[256];
        r = vf_redactor_new(secrets, sizeof secrets / sizeof secrets[0], err, sizeof err);
        buf = malloc(BIG);
        if (!r || !buf)
            abort();
    }
    if (size == 0 || size > 256)
        return 0;
    for (size_t o = 0; o < BIG; o += size)
        memcpy(buf + o, data, BIG - o < size ? BIG - o : size);
    double ts = best_time(r, buf, SMALL), tb = best_time(r, buf, BIG);
    if (tb > MAX_RATIO * ts + SLACK_S) {
        fprintf(stderr, "super-linear redaction: %u KiB %.4f s, %u KiB %.4f s (ratio %.1f)\n", SMALL >> 10,
                ts, BIG >> 10, tb, tb / ts);
        abort();
    }
    return 0;
}
