/* The broker's part of a lookup on a page the worker's code has extracted, in
 * process, for the benchmark's floor (bench_floor.c) and its by-stage timing
 * (bench_stages.c): the worker's wall fingerprints joined to the page's
 * metadata, then what vf_lookup_run does for one successful attempt (UTF-8
 * check, classify with must_contain and the page's evidence, redaction and
 * receipt) and the answer written as the broker sends it (bench_answer.c). */
#ifndef VERIFETCH_BENCH_JUDGE_H
#define VERIFETCH_BENCH_JUDGE_H

#include <stddef.h>

#include "worker/content/extract.h"
#include "worker/content/wall_signals.h"

/* The shared redactor and classifier, immutable once built (as in the
 * broker). -1 with a message in err when they cannot be built. */
int bench_judge_setup(char *err, size_t errlen);
void bench_judge_teardown(void);

/* Adds walls to ex's metadata (as worker_job.c does), judges the page and
 * writes the answer. Returns the answer's length; 0 with a message in err
 * when the page is not judged usable with at least min_chars characters, or
 * the answer cannot be built. */
size_t bench_judge_page(const char *url, const char *ctype, long status, vf_extracted *ex,
                        const vf_wall_signals *walls, size_t min_chars, char *err, size_t errlen);

#endif
