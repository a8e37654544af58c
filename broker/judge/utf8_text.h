/* Page text crosses from a hostile worker into JSON: make it valid UTF-8. */
#ifndef VERIFETCH_UTF8_TEXT_H
#define VERIFETCH_UTF8_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* malloc'd NUL-terminated copy with invalid sequences replaced by U+FFFD and NUL
 * bytes dropped; *out_len gets the byte length. NULL on allocation failure. */
char *vf_utf8_sanitize(const char *in, size_t len, size_t *out_len);

/* Whether vf_utf8_sanitize would return s unchanged (valid UTF-8, no NUL):
 * then callers may keep the bytes they have instead of copying them. */
bool vf_utf8_is_clean(const char *s, size_t len);

/* vf_utf8_sanitize on a malloc'd *text, the result replacing it; clean text
 * (the usual case) is left where it is, uncopied. -1 when out of memory
 * (*text untouched). */
int vf_utf8_sanitize_in_place(char **text, size_t *len);

/* Number of code points in valid UTF-8. */
size_t vf_utf8_count(const char *s, size_t len);

/* Eight bytes read as one word: 1 in the low bit of each byte lane holding a
 * continuation byte (10xxxxxx), 0 elsewhere. Shared by the counters that go
 * a word at a time (vf_utf8_count, pagination). */
static inline uint64_t vf_utf8_cont_lanes(uint64_t w)
{
    return (w & ~(w << 1) & UINT64_C(0x8080808080808080)) >> 7;
}

#endif
