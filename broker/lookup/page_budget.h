/* Broker post-processing of one fetched page, bounded in time.
 *
 * The redaction patterns are linear (tests/text/test_redact_linear.c), but a
 * huge page on a starved machine must still not hold a broker thread past
 * the attempt: redaction runs against a deadline, and a page that cannot be
 * processed in time fails the attempt with a detail that says so. */
#ifndef VERIFETCH_PAGE_BUDGET_H
#define VERIFETCH_PAGE_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "broker/judge/redact.h"
#include "broker/lookup/attempt.h"

/* Post-processing never gets less than this, so a fetch that used most of
 * its timeout does not fail a page that takes milliseconds to redact. */
#define VF_POSTPROCESS_MIN_MS 2000

/* The deadline for post-processing an attempt whose own deadline is
 * attempt_deadline_ms (both vf_now_ms clock). */
int64_t vf_postprocess_deadline(int64_t attempt_deadline_ms, int64_t now_ms);

/* Replaces f->text by its redacted, cleaned and sanitized form
 * (vf_redact_page_text), so it is judged as the caller will see it. On failure f becomes a forced transport_error whose detail names
 * the budget (or memory) and false is returned. */
bool vf_page_redact_within(const vf_redactor *r, vf_fetch_outcome *f, int64_t deadline_ms);

#endif
