/* Which of a set of needles occur in a text, in one pass over it: the page
 * fingerprints (wall_signals.c) are some sixty needles, and a memmem per
 * needle read the first 512 KiB of a page sixty times. */
#ifndef VERIFETCH_WORKER_NEEDLE_SCAN_H
#define VERIFETCH_WORKER_NEEDLE_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/* Sets found[i] (never clears it) when needles[i] occurs in hay[0..n), as
 * memmem(hay, n, needles[i], strlen(needles[i])) would say; byte for byte,
 * no case folding. Needles of fewer than 3 bytes are looked up with memmem. */
void vf_needle_scan(const char *hay, size_t n, const char *const *needles, size_t k, bool *found);

/* The same, with ASCII letters matching whatever their case (no other byte
 * is folded): the page need not be lowered into a copy first. */
void vf_needle_scan_nocase(const char *hay, size_t n, const char *const *needles, size_t k, bool *found);

/* Where the first occurrence of needle in hay[0..n) starts, ASCII case
 * folded as above; n when there is none (0 for an empty needle). */
size_t vf_needle_find_nocase(const char *hay, size_t n, const char *needle);

#endif
