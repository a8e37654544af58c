/* Page bytes -> valid UTF-8 for every encoding of the WHATWG Encoding
 * Standard. UTF-8, windows-1252 (and its Latin-1/ASCII labels), UTF-16,
 * x-user-defined and ISO-8859-16 are decoded here; the rest by ICU's
 * converters, whose tables live in libicudata's memory (no file is opened,
 * so decoding works under the seccomp filter; vf_charset_warm_up loads the
 * alias table before confinement all the same). A label that names no
 * decodable encoding is reported, never guessed. */
#ifndef VERIFETCH_WORKER_CHARSET_H
#define VERIFETCH_WORKER_CHARSET_H

#include <stdbool.h>
#include <stddef.h>

#include "worker/content/text_buf.h"

#include "worker/content/charset_ids.h"

/* Opens every ICU converter once (before confinement) and keeps ICU to the
 * data linked into the process. 0, or -1 with err filled. */
int vf_charset_warm_up(char *err, size_t errlen);

/* Like vf_charset_detect, but a header or <meta> label that names no
 * decodable encoding is not skipped: VF_CS_UNKNOWN is returned and the label
 * (printable ASCII, cut to fit) is copied to bad_label. Otherwise bad_label
 * is "". */
vf_charset vf_charset_detect_strict(const unsigned char *body, size_t len, const char *ctype,
                                    int is_html, char *bad_label, size_t bad_len);

/* The WHATWG name of cs ("utf-8", "windows-1252", ...). */
const char *vf_charset_name(vf_charset cs);

/* Maps an encoding label (WHATWG-style, case-insensitive, surrounding blanks
 * and quotes ignored) of length n to a charset. */
vf_charset vf_charset_from_label(const char *label, size_t n);

/* The charset parameter of a Content-Type value, or VF_CS_UNKNOWN if absent. */
vf_charset vf_charset_from_content_type(const char *ctype);

/* Decides the charset of a body: BOM, then the Content-Type parameter, then (for
 * HTML) a charset= declaration in the first 1024 bytes, then: valid UTF-8 stays
 * UTF-8, anything else is windows-1252. */
vf_charset vf_charset_detect(const unsigned char *body, size_t len,
                             const char *ctype, int is_html);

/* Decodes to malloc'd NUL-terminated UTF-8 of at most max_out bytes (cut on a
 * character boundary); NUL bytes are dropped, invalid input becomes U+FFFD, a
 * leading BOM is removed. NULL only when out of memory. */
char *vf_to_utf8(const unsigned char *in, size_t len, vf_charset cs,
                 size_t max_out, size_t *out_len);

/* The same into out (vf_tbuf_init'd or _init_mapped; its limit is max_out):
 * out->data is NUL-terminated unless out->oom. */
void vf_to_utf8_into(const unsigned char *in, size_t len, vf_charset cs, vf_tbuf *out);

/* True when vf_to_utf8_into would give back in[*skip, len) unchanged (valid
 * UTF-8 without NUL; *skip is a UTF-8 BOM's length or 0), so the page can be
 * read where it lies instead of from a copy; otherwise *skip is 0. No output
 * limit is applied. */
bool vf_utf8_as_is(const unsigned char *in, size_t len, vf_charset cs, size_t *skip);

#endif
