/* URL-aware redaction: userinfo and sensitive query/fragment values (private). */
#ifndef VERIFETCH_REDACT_URL_H
#define VERIFETCH_REDACT_URL_H

#include <stddef.h>

#include "broker/judge/redact_buf.h"

/* Appends url[0..len) to out with the userinfo and the value of every
 * sensitive parameter replaced by VF_REDACTED; all other bytes unchanged. */
void vf_url_scrub(const char *url, size_t len, vf_rbuf *out);

#endif
