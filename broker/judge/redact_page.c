#include "broker/judge/redact_page.h"

#include <stdlib.h>

#include "broker/judge/utf8_text.h"

int vf_redact_page_text(const vf_redactor *r, char **text, size_t *len)
{
    if (!*text) {
        *text = calloc(1, 1);
        *len = 0;
        if (!*text)
            return -1;
    }
    /* Neither step copies a page they leave unchanged. */
    if (vf_redact_text_in_place(r, text, len, 0) != VF_REDACT_OK)
        return -1;
    return vf_utf8_sanitize_in_place(text, len);
}
