/* Redaction, applied in the broker to everything that leaves it: the receipt
 * URL, every attempt detail and the page text. Exact-value scrubbing of every
 * configured secret (raw, URL-encoded, base64) plus PCRE2 patterns for
 * sensitive query keys, bearer tokens and well-known token shapes. */
#ifndef VERIFETCH_REDACT_H
#define VERIFETCH_REDACT_H

#include <stddef.h>
#include <stdint.h>

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

typedef enum {
    VF_REDACT_OK = 0,
    VF_REDACT_NOMEM,
    VF_REDACT_OVER_BUDGET, /* deadline passed: nothing is returned, fail the lookup */
} vf_redact_status;

/* vf_redact_text bounded in time: gives up (NULL, VF_REDACT_OVER_BUDGET) once
 * CLOCK_MONOTONIC milliseconds (vf_now_ms) pass deadline_ms; 0 = no deadline.
 * The patterns are linear, so this is a backstop for huge pages on a starved
 * machine, never the only defence. */
char *vf_redact_text_by(const vf_redactor *r, const char *in, size_t len, int64_t deadline_ms,
                        size_t *out_len, vf_redact_status *status);

/* vf_redact_text_by on a malloc'd, NUL-terminated *text of *len bytes, the
 * result replacing it: byte for byte what vf_redact_text_by returns, but
 * when nothing is redacted *text stays as it is and no copy is made. On
 * failure *text is untouched (the caller decides what to drop). */
vf_redact_status vf_redact_text_in_place(const vf_redactor *r, char **text, size_t *len, int64_t deadline_ms);

/* URL flavour: additionally blanks the values of sensitive query keys and the
 * userinfo part. */
char *vf_redact_url(const vf_redactor *r, const char *url);

#endif
