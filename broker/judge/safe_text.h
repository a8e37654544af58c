/* What origin-controlled text may look like when it reaches a model or a
 * terminal (issue 13 items 5 and 10).
 *
 * Page text (model-facing): valid UTF-8 in, and out without C0/C1 control
 * characters other than \n and \t (no ESC, so no OSC 52 clipboard writes,
 * title changes or screen clears; CR and the Unicode line/paragraph
 * separators become \n), and without bidi embeddings, overrides, isolates
 * or marks (text that reads differently from what it is).
 *
 * Details and the LOOKUP FAILED line (a single line a model trusts): only
 * printable ASCII. Anything else is escaped (\xHH for a byte, \u{HHHH} for
 * a character), so a line break, a bidi control or a look-alike can never
 * appear, and the result is bounded, cut with "..." when long. */
#ifndef VERIFETCH_SAFE_TEXT_H
#define VERIFETCH_SAFE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* malloc'd NUL-terminated cleaned copy of valid UTF-8 in[0..len); NULL on
 * allocation failure. */
char *vf_model_text_clean(const char *in, size_t len, size_t *out_len);

/* One character of vf_model_text_clean: what s[i..] (of len) becomes is
 * written at out + *o (*o advanced); returns the input bytes consumed. The
 * cleaner copies plain ASCII runs in bulk and uses this for the rest; the
 * tests check the bulk path against this one alone. */
size_t vf_model_text_clean_char(const unsigned char *s, size_t len, size_t i, char *out, size_t *o);

/* Whether vf_model_text_clean would return valid UTF-8 s unchanged (then
 * callers keep the bytes they have). */
bool vf_model_text_is_clean(const char *s, size_t len);

/* vf_model_text_clean on a malloc'd *text, the result replacing it; clean
 * text (the usual case) is left where it is, uncopied. -1 when out of
 * memory (*text untouched). */
int vf_model_text_clean_in_place(char **text, size_t *len);

/* True for a code point vf_model_text_clean drops. */
bool vf_model_text_drops(unsigned cp);

/* Writes the printable-ASCII form of in[0..len) into out (always
 * NUL-terminated, at most out_len - 1 bytes, "..." when cut). */
void vf_ascii_line(const char *in, size_t len, char *out, size_t out_len);

#endif
