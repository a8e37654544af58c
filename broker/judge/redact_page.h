/* The page text as the caller will receive it: redacted, cleaned for a
 * model (safe_text.h), then valid UTF-8 without NUL. The verdict is judged
 * on this same text. */
#ifndef VERIFETCH_REDACT_PAGE_H
#define VERIFETCH_REDACT_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "broker/judge/redact.h"

/* Replaces *text (malloc'd, may be NULL = empty) with its redacted, cleaned
 * and sanitized form; a step that changes nothing leaves the bytes where
 * they are. The first redaction runs against deadline_ms (vf_now_ms clock,
 * 0 = none). The text is redacted a second time only when the first
 * redaction or the cleaning changed it: a scan of the very bytes it already
 * scanned finds nothing new. On failure *text is still one valid
 * allocation (the caller decides what to drop). */
vf_redact_status vf_redact_page_text(const vf_redactor *r, char **text, size_t *len, int64_t deadline_ms);

#endif
