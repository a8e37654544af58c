/* The text every redaction leaves in place of what it removed. A header of its
 * own so the output buffer (redact_buf.c) can write it without including the
 * redactor it serves. */
#ifndef VERIFETCH_REDACT_MARKER_H
#define VERIFETCH_REDACT_MARKER_H

#define VF_REDACTED "[REDACTED]"

#endif
