#include "broker/lookup/page_budget.h"

#include <stdio.h>
#include <stdlib.h>

#include "broker/judge/redact_page.h"

int64_t vf_postprocess_deadline(int64_t attempt_deadline_ms, int64_t now_ms)
{
    int64_t floor = now_ms + VF_POSTPROCESS_MIN_MS;
    return attempt_deadline_ms > floor ? attempt_deadline_ms : floor;
}

bool vf_page_redact_within(const vf_redactor *r, vf_fetch_outcome *f, int64_t deadline_ms)
{
    if (f->forced != VF_OUTCOME_OK)
        return true;
    size_t kib = f->text_len >> 10;
    /* As the caller will receive it (redact_page.h), each step in place
     * when it changes nothing (no copy of the page then). */
    vf_redact_status st = vf_redact_page_text(r, &f->text, &f->text_len, deadline_ms);
    if (st == VF_REDACT_OK)
        return true;
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
