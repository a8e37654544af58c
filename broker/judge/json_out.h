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

/* Exact length of the escaped form of s[0..len) (without quotes). */
size_t vf_json_escaped_len(const char *s, size_t len);

/* Escapes as much of s[0..len) as fits whole into dst[0..room) (an escape
 * sequence is never cut); *consumed gets the input bytes used. Returns the
 * bytes written. For writing a long string out in pieces. */
size_t vf_json_escape_some(char *dst, size_t room, const char *s, size_t len, size_t *consumed);

/* A long string left out of a dump: its escaped form belongs at byte `at` of
 * the dumped text (between the quotes, which the text has). */
typedef struct {
    size_t at;
    const char *s;        /* points into the document: valid while it lives */
    size_t len;
    size_t escaped_len;
} vf_json_hole;

/* vf_json_dump, except that every string of at least min_hole bytes is left
 * out as a hole (at most max_holes of them; the rest are written inline), so
 * a caller can stream the document without a second copy of a page's text.
 * *n_holes gets the count; holes are in output order. */
char *vf_json_dump_holes(const json_t *doc, size_t min_hole, vf_json_hole *holes, size_t max_holes,
                         size_t *n_holes, size_t *len);

/* A document written out in pieces of any size, long strings escaped
 * straight from the document (no copy of them is made). */
typedef struct vf_json_stream vf_json_stream;

/* Takes doc (freed with the stream, or now on failure). *total gets the exact
 * length of what the reads will yield. NULL when out of memory. */
vf_json_stream *vf_json_stream_new(json_t *doc, size_t min_hole, size_t *total);
/* Next bytes into buf (max >= 6, the longest escape); 0 only at the end. */
size_t vf_json_stream_read(vf_json_stream *st, char *buf, size_t max);
/* Everything (total bytes, as vf_json_stream_new said) into one malloc'd,
 * NUL-terminated buffer; NULL when out of memory. */
char *vf_json_stream_read_all(vf_json_stream *st, size_t total);
void vf_json_stream_free(vf_json_stream *st);

#endif
