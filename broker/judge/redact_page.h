/* The page text as the caller will receive it: redacted, then valid UTF-8
 * without NUL. The verdict is judged on this same text. */
#ifndef VERIFETCH_REDACT_PAGE_H
#define VERIFETCH_REDACT_PAGE_H

#include <stddef.h>

#include "broker/judge/redact.h"

/* Replaces *text (malloc'd, may be NULL = empty) with its redacted, sanitized
 * form; a step that changes nothing leaves the bytes where they are. 0, or
 * -1 when out of memory (then *text is still one valid allocation). */
int vf_redact_page_text(const vf_redactor *r, char **text, size_t *len);

#endif
