/* Throughput of redaction + classification on a 5 MiB page of realistic
 * HTML-extracted prose: English-like paragraphs (with words such as
 * "because", "bearer", "authorization", "high", "key" that touch the
 * prefilter), clean URLs every couple of KiB and a credential every ~48 KiB.
 * Prints the median MB/s (1 MB = 10^6 bytes) of several runs, by thread CPU
 * time (what one broker thread sustains, stable on a busy machine) and by
 * wall time, and checks the output: every planted credential redacted,
 * nothing else touched. VF_BENCH_MIN_MBPS=N makes it exit non-zero when the
 * CPU-time figure is below N MB/s. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/judge/classify.h"
#include "broker/judge/redact.h"

#define BODY_BYTES (5u << 20)
#define RUNS 9

static const char *const words[] = {
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
    "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
    "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
    "been", "if", "more", "when", "will", "would", "who", "so", "because", "between", "being",
    "beyond", "author", "authority", "authorization", "August", "audio", "bearer", "key",
    "token", "session", "state", "code", "secret", "password", "high", "though", "right",
    "eye", "eyes", "ask", "work", "desk", "risk", "giving", "begin", "exotic", "box", "Asia",
    "AKA", "network", "protocol", "request", "response", "server", "client", "header",
    "document", "browser", "example", "section", "result", "provider", "content", "agent",
    "R&D", "Q&A", "e.g.", "i.e.", "3:4", "--", "(see below)", "\"quoted\"", "naïve", "café",
};

static const char *const clean_urls[] = {
    "https://docs.example.org/guide/section-12?page=4&lang=en#intro",
    "http://www.example.com/articles/2024/05/how-tokens-work.html",
    "https://en.wikipedia.org/wiki/Bearer_instrument?oldid=123456",
};

#define SECRET_A "prov1der-Key-0f9e8d7c6b5a"

/* planted credential and what it must become */
static const char *const planted[][2] = {
    {"https://api.example.com/v2/items?api_key=K7x9q2w3e4&page=3",
     "https://api.example.com/v2/items?api_key=" VF_REDACTED "&page=3"},
    {"Authorization: Bearer tok3nabcdef1234567890", "Authorization: Bearer " VF_REDACTED},
    {"AKIAIOSFODNN7EXAMPLE", VF_REDACTED},
    {SECRET_A, VF_REDACTED},
    {"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcDEF123_-x", VF_REDACTED},
    {"ghp_0123456789abcdefghijABCDEFGHIJklmnop", VF_REDACTED},
};
#define N_KINDS (sizeof planted / sizeof planted[0])

static uint32_t rng = 0x9e3779b9u;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

/* The body and, in step, the text it must redact to. */
typedef struct {
    char *in, *want;
    size_t in_len, want_len;
} body;

static void put(body *b, const char *in, const char *want)
{
    size_t n = strlen(in), m = strlen(want);
    memcpy(b->in + b->in_len, in, n);
    memcpy(b->want + b->want_len, want, m);
    b->in_len += n;
    b->want_len += m;
}

static void put_same(body *b, const char *s)
{
    put(b, s, s);
}

static body make_body(size_t *n_planted)
{
    body b = {malloc(BODY_BYTES + 4096), malloc(BODY_BYTES + 4096), 0, 0};
    size_t next_url = 2048, next_secret = 48 << 10, words_in_sentence = 0;
    *n_planted = 0;
    while (b.in_len < BODY_BYTES) {
        if (b.in_len >= next_secret) {
            put_same(&b, " ");
            put(&b, planted[*n_planted % N_KINDS][0], planted[*n_planted % N_KINDS][1]);
            put_same(&b, " ");
            ++*n_planted;
            next_secret += 48 << 10;
        } else if (b.in_len >= next_url) {
            put_same(&b, " ");
            put_same(&b, clean_urls[next_rand() % 3]);
            put_same(&b, " ");
            next_url += 1536 + next_rand() % 1024;
        }
        char w[64];
        snprintf(w, sizeof w, "%s", words[next_rand() % (sizeof words / sizeof words[0])]);
        if (words_in_sentence == 0 && w[0] >= 'a' && w[0] <= 'z')
            w[0] = (char)(w[0] - 32); /* sentence case */
        put_same(&b, w);
        words_in_sentence++;
        uint32_t r = next_rand() % 100;
        if (words_in_sentence > 8 && r < 12) {
            put_same(&b, r < 2 ? "?" : r < 4 ? ";" : ".");
            words_in_sentence = 0;
            put_same(&b, next_rand() % 10 == 0 ? "\n\n" : " ");
        } else {
            put_same(&b, r < 6 ? ", " : " ");
        }
    }
    b.in[b.in_len] = b.want[b.want_len] = '\0';
    return b;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
    return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    char err[256];
    const char *secrets[] = {SECRET_A, "another-configured-key-77"};
    vf_redactor *r = vf_redactor_new(secrets, 2, err, sizeof err);
    vf_classifier *c = vf_classifier_new(NULL, 0, err, sizeof err);
    if (!r || !c) {
        fprintf(stderr, "setup: %s\n", err);
        return 1;
    }
    size_t n_planted;
    body b = make_body(&n_planted);
    size_t len = b.in_len;

    double total[RUNS], red[RUNS], cls[RUNS], wall[RUNS];
    size_t out_len = 0;
    for (int i = 0; i < RUNS; i++) {
        double w0 = clock_s(CLOCK_MONOTONIC);
        double t0 = now();
        char detail[160];
        size_t chars;
        vf_classify_input in = {.http_status = 200, .content_type = "text/html; charset=utf-8",
                                .text = b.in, .text_len = len, .must_contain = "because", .min_chars = 40};
        vf_outcome oc = vf_classify(c, &in, detail, sizeof detail, &chars);
        double t1 = now();
        char *out = vf_redact_text(r, b.in, len, &out_len);
        double t2 = now();
        wall[i] = clock_s(CLOCK_MONOTONIC) - w0;
        if (!out || oc != VF_OUTCOME_OK) {
            fprintf(stderr, "bad run: %s\n", out ? detail : "redaction failed");
            return 1;
        }
        if (i == 0 && (out_len != b.want_len || memcmp(out, b.want, out_len) != 0)) {
            size_t k = 0;
            while (k < out_len && k < b.want_len && out[k] == b.want[k])
                k++;
            fprintf(stderr, "wrong output at byte %zu: got [%.60s] want [%.60s]\n", k, out + k, b.want + k);
            return 1;
        }
        free(out);
        total[i] = t2 - t0;
        cls[i] = t1 - t0;
        red[i] = t2 - t1;
    }
    qsort(total, RUNS, sizeof(double), cmp_double);
    qsort(red, RUNS, sizeof(double), cmp_double);
    qsort(cls, RUNS, sizeof(double), cmp_double);
    qsort(wall, RUNS, sizeof(double), cmp_double);
    double mbps = (double)len / 1e6 / total[RUNS / 2];
    printf("redact+classify %.2f MiB: %.0f MB/s CPU time, %.0f MB/s wall (medians of %d; CPU: redact %.0f MB/s, "
           "classify %.0f MB/s; %zu credentials planted and redacted)\n",
           (double)len / (1 << 20), mbps, (double)len / 1e6 / wall[RUNS / 2], RUNS,
           (double)len / 1e6 / red[RUNS / 2], (double)len / 1e6 / cls[RUNS / 2], n_planted);
    const char *min = getenv("VF_BENCH_MIN_MBPS");
    int rc = 0;
    if (min && mbps < atof(min)) {
        fprintf(stderr, "below the floor of %s MB/s\n", min);
        rc = 1;
    }
    free(b.in);
    free(b.want);
    vf_redactor_free(r);
    vf_classifier_free(c);
    return rc;
}
