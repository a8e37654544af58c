/* The benchmark's page: deterministic prose without anything a redactor or an
 * interstitial detector would react to, as HTML paragraphs or plain lines.
 * Served by bench_origin.c and timed offline by bench_stages.c, so both see
 * exactly the same bytes. */
#ifndef VERIFETCH_BENCH_PAGE_H
#define VERIFETCH_BENCH_PAGE_H

#include <stdbool.h>
#include <stddef.h>

/* A malloc'd len-byte page (NUL-terminated), NULL when out of memory. */
char *bench_page_body(size_t len, bool html);

#endif
