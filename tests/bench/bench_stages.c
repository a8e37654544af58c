/* The floor without the network: the bench origin's page, then the worker's
 * text library (vf_extract_with, as the worker calls it) and the broker's
 * judge (UTF-8 check, classify, redaction + receipt, JSON), each timed in
 * thread CPU time over N repetitions. Load on other cores barely moves it,
 * and it runs under callgrind or perf as it is, so the data path's CPU can be
 * compared across commits without the full benchmark.
 * Usage: verifetch-bench-stages [BYTES [REPS [html|text]]] */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/memory_tune.h"

#include "bench.h"
#include "bench_judge.h"
#include "bench_page.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 10) : 1048576;
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    bool html = argc > 3 ? strcmp(argv[3], "text") != 0 : true;
    if (bytes < 256 || reps < 1 || reps > 10000) {
        fprintf(stderr, "usage: %s [BYTES>=256 [REPS 1..10000 [html|text]]]\n", argv[0]);
        return 2;
    }
    vf_memory_reuse_page_buffers(); /* as the floor does (bench_main.c) */
    const char *url = "http://127.0.0.1/page";
    const char *ctype = html ? "text/html; charset=utf-8" : "text/plain; charset=utf-8";
    char err[256];
    if (bench_judge_setup(err, sizeof err) != 0) {
        fprintf(stderr, "set-up failed: %s\n", err);
        return 1;
    }
    char *body = bench_page_body(bytes, html);
    double *ext_ms = calloc((size_t)reps, sizeof *ext_ms), *judge_ms = calloc((size_t)reps, sizeof *judge_ms),
           *wall_ms = calloc((size_t)reps, sizeof *wall_ms);
    if (!body || !ext_ms || !judge_ms || !wall_ms) {
        fprintf(stderr, "set-up failed\n");
        return 1;
    }
    size_t answer_len = 0, text_len = 0;
    for (int r = 0; r < reps; r++) {
        double tw = bench_thread_cpu_ms();
        vf_wall_signals walls = { 0 };
        if (html)
            vf_wall_signals_scan_html(&walls, body, bytes);
        double t0 = bench_thread_cpu_ms();
        wall_ms[r] = t0 - tw;
        vf_extracted ex = { 0 };
        vf_extract_opts xo = { .render = 0, .page_url = url };
        if (!vf_extract_with(&xo, VF_MODE_RAW, NULL, 200, ctype, body, bytes, 16u << 20, &ex))
            return 1;
        double t1 = bench_thread_cpu_ms();
        answer_len = bench_judge_page(url, ctype, 200, &ex, &walls, 1, err, sizeof err);
        double t2 = bench_thread_cpu_ms();
        if (!answer_len) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        text_len = ex.text_len;
        vf_extracted_free(&ex);
        ext_ms[r] = t1 - t0;
        judge_ms[r] = t2 - t1;
    }
    qsort(ext_ms, (size_t)reps, sizeof *ext_ms, cmp_double);
    qsort(judge_ms, (size_t)reps, sizeof *judge_ms, cmp_double);
    qsort(wall_ms, (size_t)reps, sizeof *wall_ms, cmp_double);
    printf("page %zu B (%s), text %zu B, answer %zu B, %d reps: fingerprints median %.3f ms (min %.3f), "
           "extract median %.3f ms (min %.3f), judge+json median %.3f ms (min %.3f)\n",
           bytes, html ? "html" : "text", text_len, answer_len, reps, wall_ms[reps / 2], wall_ms[0],
           ext_ms[reps / 2], ext_ms[0], judge_ms[reps / 2], judge_ms[0]);
    free(wall_ms);
    free(ext_ms);
    free(judge_ms);
    free(body);
    bench_judge_teardown();
    return 0;
}
