/* Folding for "the same words" comparisons: must_contain and the wall
 * phrases. Unicode NFKC with case folding (utf8proc), default-ignorable code
 * points dropped (soft hyphen, zero-width), every quote, apostrophe and dash
 * spelling lumped to its ASCII form, controls and whitespace runs to one
 * space, trimmed. */
#ifndef VERIFETCH_TEXT_FOLD_H
#define VERIFETCH_TEXT_FOLD_H

#include <stdbool.h>
#include <stddef.h>

#include <utf8proc.h>

/* malloc'd, NUL-terminated folded copy of s[0..len); *out_len gets its length.
 * Invalid UTF-8 is folded as if each bad byte were U+FFFD. NULL only when out
 * of memory. */
char *vf_fold_text(const char *s, size_t len, size_t *out_len);

/* Whether the folded form of s[0..len) contains fneedle[0..fn) (already
 * folded): memmem over vf_fold_text's output, without holding it whole --
 * the folding runs in windows of about 64 KiB, searched as they fill, with
 * the last fn - 1 bytes carried over. false only when out of memory. */
bool vf_fold_contains(const char *s, size_t len, const char *fneedle, size_t fn, bool *found);
/* The same with the window given (tests use small ones to put every
 * boundary under a match). */
bool vf_fold_contains_window(const char *s, size_t len, const char *fneedle, size_t fn, size_t window,
                             bool *found);

/* The quote, apostrophe and dash lumping utf8proc is given as its custom
 * mapping (whatever UTF8PROC_LUMP does with them in this version); a
 * utf8proc_custom_func. */
utf8proc_int32_t vf_fold_punct(utf8proc_int32_t cp, void *data);

#endif
