/* Compact JSON output for the broker's answers, byte for byte what
 * json_dumps(doc, JSON_COMPACT) writes for the same document, without
 * jansson's per-code-point string escaping: a page's text is copied in bulk
 * and only '"', '\\' and bytes below 0x20 are escaped. Every string the
 * broker builds is valid UTF-8 already (the text is sanitised, the rest goes
 * through json_string's own check), so nothing else needs looking at. */
#ifndef VERIFETCH_JSON_OUT_H
#define VERIFETCH_JSON_OUT_H

#include <jansson.h>
#include <stddef.h>

/* malloc'd, NUL-terminated; *len (if given) excludes the NUL. NULL when out
 * of memory, when the document nests deeper than 2048 levels, or when a real
 * cannot be formatted. */
char *vf_json_dump(const json_t *doc, size_t *len);

/* Appends the escaped form of s[0..len) (without quotes) to dst, which must
 * have room for vf_json_escaped_max(len) bytes; returns the bytes written. */
size_t vf_json_escape(char *dst, const char *s, size_t len);

static inline size_t vf_json_escaped_max(size_t len)
{
    return len * 6; /* every byte a \u00XX */
}

#endif
