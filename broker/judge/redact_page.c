#include "broker/judge/redact_page.h"

#include <stdbool.h>
#include <stdlib.h>

#include "broker/judge/safe_text.h"
#include "broker/judge/utf8_text.h"

vf_redact_status vf_redact_page_text(const vf_redactor *r, char **text, size_t *len, int64_t deadline_ms)
{
    if (!*text) {
        *text = calloc(1, 1);
        *len = 0;
        if (!*text)
            return VF_REDACT_NOMEM;
    }
    /* Each in-place step returns the same buffer when it changes nothing
     * and a fresh one (allocated while the old was alive, so a different
     * address) when it changes anything. */
    char *before = *text;
    vf_redact_status st = vf_redact_text_in_place(r, text, len, deadline_ms);
    if (st != VF_REDACT_OK)
        return st;
    bool changed = *text != before;
    before = *text;
    if (vf_model_text_clean_in_place(text, len) != 0)
        return VF_REDACT_NOMEM;
    changed = changed || *text != before;
    /* Dropping a control or a bidi mark can join the two halves of a secret,
     * and a marker set next to text can complete a pattern: changed text is
     * scanned again. Unchanged text would redact exactly as it just did. */
    if (changed && vf_redact_text_in_place(r, text, len, 0) != VF_REDACT_OK)
        return VF_REDACT_NOMEM;
    return vf_utf8_sanitize_in_place(text, len) == 0 ? VF_REDACT_OK : VF_REDACT_NOMEM;
}
