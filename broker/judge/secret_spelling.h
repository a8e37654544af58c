/* The ways one byte of a configured key can be spelled in page text, and
 * what may sit between two of its characters (private to redaction; issue
 * 13 item 16). Matching a key through these is what normalising the text
 * (NFKC, zero-width removal, entity and escape decoding) before an exact
 * search would do, without a second copy of the text and with a bounded
 * cost per position, so redaction stays linear.
 *
 * A byte b may appear as:
 *  - itself, or '+' for a space;
 *  - %XX, \xXX, \u00XX (JSON), &#DDD; / &#xHH; (any hex case, leading
 *    zeros, ';' optional), or a named HTML entity for ASCII punctuation;
 *  - one character whose compatibility decomposition (NFKC) is b alone:
 *    fullwidth forms, mathematical alphanumerics, circled letters, ... (also
 *    when written as a numeric entity or \u escape).
 * Between two characters, up to VF_SPELLING_GAP_MAX of: CR, LF, and
 * zero-width or invisible characters (ZWSP, ZWNJ, ZWJ, WORD JOINER, BOM,
 * SOFT HYPHEN). An escaped form that decodes to another byte is a
 * mismatch, never read as its raw characters. */
#ifndef VERIFETCH_SECRET_SPELLING_H
#define VERIFETCH_SECRET_SPELLING_H

#include <stdbool.h>
#include <stddef.h>

#define VF_SPELLING_GAP_MAX 8

/* Bytes at t that spell b (0 when they do not). */
size_t vf_spelled_byte(const unsigned char *t, size_t avail, unsigned char b);

/* Bytes of the ignorable run at t (at most VF_SPELLING_GAP_MAX pieces). */
size_t vf_spelling_gap(const unsigned char *t, size_t avail);

/* Calls fn with every spelling of b that matters for a 3-byte prefix: the
 * complete spelling when it is shorter than 3 bytes, else at least its
 * first 3 bytes. */
void vf_spellings_of(unsigned char b, void (*fn)(void *ctx, const unsigned char *s, size_t len), void *ctx);

/* Calls fn with each gap piece (CR, LF, CRLF, the zero-width characters). */
void vf_gap_pieces(void (*fn)(void *ctx, const unsigned char *s, size_t len), void *ctx);

#endif
