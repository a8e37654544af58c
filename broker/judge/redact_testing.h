/* Test-only access to redaction internals. Not for production callers. */
#ifndef VERIFETCH_REDACT_TESTING_H
#define VERIFETCH_REDACT_TESTING_H

#include <stdint.h>

#include "broker/judge/redact.h"

/* Lowers the PCRE2 match limit of r's patterns so tests can drive the
 * fail-closed path. Call before sharing r between threads. */
void vf_redactor_set_match_limit(vf_redactor *r, uint32_t limit);

#endif
