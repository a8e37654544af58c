/* Page bytes -> valid UTF-8, without iconv. glibc's iconv opens gconv modules
 * from disk, which the seccomp filter forbids, so the worker decodes the few
 * charsets that matter itself and treats everything else as UTF-8 with
 * replacement characters. The output never contains NUL or invalid UTF-8, so
 * libxml2 never has a reason to switch encodings on its own. */
#ifndef VERIFETCH_WORKER_CHARSET_H
#define VERIFETCH_WORKER_CHARSET_H

#include <stddef.h>

typedef enum {
    VF_CS_UTF8 = 0,
    VF_CS_WINDOWS_1252, /* also every ISO-8859-1 / ASCII label, as browsers do */
    VF_CS_UTF16LE,
    VF_CS_UTF16BE,
    VF_CS_UNKNOWN,      /* a label we cannot decode: handled as UTF-8 */
} vf_charset;

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

#endif
