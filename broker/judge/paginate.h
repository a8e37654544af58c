/* Cuts the (redacted) page text into pages a model can ask for one at a
 * time: at most max_chars code points from start_index, ending on a
 * paragraph, line, sentence or word boundary when one lies in the second
 * half of the window. The cut depends only on the text and the two numbers,
 * so the same page fetched again continues exactly where it stopped. */
#ifndef VERIFETCH_JUDGE_PAGINATE_H
#define VERIFETCH_JUDGE_PAGINATE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    size_t total_chars;      /* code points of the whole text */
    size_t start_index;      /* as asked (code points) */
    size_t begin, end;       /* byte range of the slice in the text */
    size_t slice_chars;      /* code points in the slice */
    bool truncated;          /* text remains after the slice */
    size_t next_start_index; /* where the next page starts (when truncated) */
} vf_page_cut;

/* text is valid UTF-8 of len bytes; max_chars >= 1. */
void vf_paginate(const char *text, size_t len, size_t start_index, size_t max_chars,
                 vf_page_cut *cut);

/* The one-line hint appended to a truncated page, into buf. */
void vf_paginate_hint(const vf_page_cut *cut, char *buf, size_t len);

#endif
