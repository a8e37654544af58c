#include "broker/judge/redact_page.h"

#include <stdlib.h>

#include "broker/judge/utf8_text.h"

int vf_redact_page_text(const vf_redactor *r, char **text, size_t *len)
{
    size_t rlen = 0, clean_len = 0;
    char *red = vf_redact_text(r, *text ? *text : "", *text ? *len : 0, &rlen);
    if (!red)
        return -1;
    char *clean = vf_utf8_sanitize(red, rlen, &clean_len);
    free(red);
    if (!clean)
        return -1;
    free(*text);
    *text = clean;
    *len = clean_len;
    return 0;
}
