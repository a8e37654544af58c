/* The receipt (verified_web_lookup.receipt/v1) and the Strands ToolResult
 * around it. Field names and meanings follow the seed exactly; additions are
 * documented in README. */
#ifndef VERIFETCH_RECEIPT_H
#define VERIFETCH_RECEIPT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "broker/lookup/attempt.h"
#include "broker/judge/redact.h"

#define VF_RECEIPT_SCHEMA "verified_web_lookup.receipt/v1"

typedef enum {
    VF_FAIL_NONE = 0,
    VF_FAIL_NO_PROVIDERS,        /* no_providers_configured */
    VF_FAIL_ALL_FAILED,          /* all_providers_failed */
    VF_FAIL_BUDGET_EXHAUSTED,    /* attempt_budget_exhausted */
} vf_failure_reason;

const char *vf_failure_reason_name(vf_failure_reason r); /* NULL for NONE */

typedef struct {
    const char *url;                 /* as requested; redacted on output */
    unsigned max_attempts;           /* clamped */
    unsigned providers_available;
    const vf_attempt_record *log;
    size_t n_attempts;
    const char *provider_used;       /* NULL unless ok */
    vf_failure_reason failure;
    size_t content_chars;            /* of the returned text; 0 on failure */
    const char *text;                /* page text on success, else NULL */
    bool text_is_redacted;           /* text was already through vf_redact_page_text */
    size_t text_len;
    /* additive fields */
    const char *final_url;           /* last hop of the successful attempt, or NULL */
    const char *tenant;
    const char *order_reason;        /* why providers were tried in this order */
    bool thin;                       /* ok but under VF_THIN_CHARS of main content */
    const vf_page_meta *meta;        /* what the worker read from the page, or NULL */
    const char *content_type;        /* of the final response, or NULL */
    size_t max_chars;                /* pagination: 0 = return the whole text */
    size_t start_index;
    long long queue_ms;              /* waited for a worker slot; < 0: not reported */
} vf_receipt_input;

/* Build the ToolResult {"status", "content": [{"json": receipt}, {"text": ...}]}.
 * Everything textual is passed through the redactor. NULL on allocation failure. */
json_t *vf_tool_result_build(const vf_receipt_input *in, const vf_redactor *redactor);

#endif
