#include "broker/lookup/page_budget.h"

#include <stdio.h>
#include <stdlib.h>

#include "broker/judge/safe_text.h"

int64_t vf_postprocess_deadline(int64_t attempt_deadline_ms, int64_t now_ms)
{
    int64_t floor = now_ms + VF_POSTPROCESS_MIN_MS;
    return attempt_deadline_ms > floor ? attempt_deadline_ms : floor;
}

bool vf_page_redact_within(const vf_redactor *r, vf_fetch_outcome *f, int64_t deadline_ms)
{
    if (f->forced != VF_OUTCOME_OK || !f->text)
        return true;
    size_t len = 0;
    vf_redact_status st;
    char *red = vf_redact_text_by(r, f->text, f->text_len, deadline_ms, &len, &st);
    if (red) {
        /* and cleaned as the receipt will clean it (safe_text.h) */
        size_t clean_len = 0;
        char *clean = vf_model_text_clean(red, len, &clean_len);
        free(red);
        if (clean) {
            free(f->text);
            f->text = clean;
            f->text_len = clean_len;
            return true;
        }
        st = VF_REDACT_NOMEM;
    }
    size_t kib = f->text_len >> 10;
    free(f->text);
    f->text = NULL;
    f->text_len = 0;
    f->forced = VF_OUTCOME_TRANSPORT_ERROR;
    if (st == VF_REDACT_OVER_BUDGET)
        snprintf(f->detail, sizeof f->detail,
                 "broker post-processing of the page (%zu KiB) exceeded the attempt deadline", kib);
    else
        snprintf(f->detail, sizeof f->detail, "broker out of memory while redacting the page (%zu KiB)", kib);
    return false;
}
