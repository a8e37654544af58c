/* Redaction, applied in the broker to everything that leaves it: the receipt
 * URL, every attempt detail and the page text. Exact-value scrubbing of every
 * configured secret (raw, URL-encoded, base64) plus PCRE2 patterns for
 * sensitive query keys, bearer tokens and well-known token shapes. */
#ifndef VERIFETCH_REDACT_H
#define VERIFETCH_REDACT_H

#include <stddef.h>

#include "broker/judge/redact_marker.h"

typedef struct vf_redactor vf_redactor;

/* secrets: configured provider keys (may be NULL/0). Compiles all patterns with
 * JIT once; the result is immutable and safe to share between threads.
 * Returns NULL on failure with a message in err. */
vf_redactor *vf_redactor_new(const char *const *secrets, size_t n_secrets,
                             char *err, size_t errlen);
void vf_redactor_free(vf_redactor *r);

/* Return a malloc'd, NUL-terminated redacted copy of in[0..len); *out_len gets
 * its length. NULL only on allocation failure. Every match is bounded by PCRE2
 * match/depth limits; if a limit trips, the affected text is redacted whole
 * (fail closed), never passed through. */
char *vf_redact_text(const vf_redactor *r, const char *in, size_t len, size_t *out_len);

/* URL flavour: additionally blanks the values of sensitive query keys and the
 * userinfo part. */
char *vf_redact_url(const vf_redactor *r, const char *url);

#endif
