/* Which wall family, if any, a fetched page is: weighs the title and first
 * heading, the main-content text, how much of the page the main content is,
 * a password field, and the worker's vendor fingerprints (signals). A generic
 * phrase alone never decides against a page with substantial main content. */
#ifndef VERIFETCH_WALL_JUDGE_H
#define VERIFETCH_WALL_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

#include "broker/judge/wall.h"

/* What the worker learned about the page besides its text (from
 * vf_page_meta; every field optional). */
typedef struct {
    const char *title;           /* NULL = unknown */
    const char *h1;              /* first heading, NULL = unknown */
    size_t page_chars;           /* code points of the whole pruned page; 0 = unknown */
    bool password_field;         /* a password input inside the main content */
    const char *const *signals;  /* "hdr:cf-mitigated=challenge", "mk:datadome-captcha", ... */
    size_t n_signals;
} vf_page_evidence;

/* Main-content sizes (code points) the rules use; documented in README. */
#define VF_WALL_TINY_CHARS 300u    /* below: a generic title alone is enough */
#define VF_WALL_SHORT_CHARS 500u   /* below: one wall sentence is enough */
#define VF_WALL_SMALL_CHARS 1500u  /* below: vendor fingerprints and supported titles count */
#define VF_WALL_LARGE_CHARS 4000u  /* below: a wall-only title with support counts */
#define VF_WALL_TEASER_CHARS 2500u /* below: a paywall sentence counts (teasers run long) */

typedef struct vf_wall_lexicon vf_wall_lexicon;

/* Folds the built-in phrases once; NULL when out of memory. Immutable after. */
vf_wall_lexicon *vf_wall_lexicon_new(void);
void vf_wall_lexicon_free(vf_wall_lexicon *lx);

/* The family the page is (VF_WALL_NONE when none), skipping families whose
 * VF_WALL_BIT is in disabled. text is the main content the caller receives,
 * chars its length in code points. why (may be NULL) gets which signal fired,
 * e.g. "title 'just a moment'" or "signal hdr:cf-mitigated=challenge". */
vf_wall vf_wall_judge(const vf_wall_lexicon *lx, const vf_page_evidence *ev, int http_status,
                      const char *text, size_t text_len, size_t chars, unsigned disabled,
                      char *why, size_t whylen);

#endif
