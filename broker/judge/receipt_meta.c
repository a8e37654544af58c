#include "broker/judge/receipt_meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/utf8_text.h"

static int put_redacted(json_t *o, const char *key, const char *s, bool url,
                        const vf_redactor *r)
{
    if (!s)
        return 0;
    char *red = url ? vf_redact_url(r, s) : NULL;
    size_t rlen = 0;
    if (!url)
        red = vf_redact_text(r, s, strlen(s), &rlen);
    else if (red)
        rlen = strlen(red);
    if (!red)
        return -1;
    size_t clean_len = 0;
    char *clean = vf_utf8_sanitize(red, rlen, &clean_len);
    free(red);
    if (!clean)
        return -1;
    int rc = json_object_set_new(o, key, json_stringn_nocheck(clean, clean_len));
    free(clean);
    return rc;
}

int vf_receipt_add_page_fields(json_t *o, const vf_page_meta *m, const char *content_type,
                               const vf_page_cut *cut, const vf_redactor *r)
{
    if (m && (put_redacted(o, "title", m->title, false, r) != 0 ||
              put_redacted(o, "lang", m->lang, false, r) != 0 ||
              put_redacted(o, "canonical_url", m->canonical_url, true, r) != 0 ||
              put_redacted(o, "description", m->description, false, r) != 0 ||
              put_redacted(o, "published", m->published, false, r) != 0))
        return -1;
    if (put_redacted(o, "content_type", content_type, false, r) != 0)
        return -1;
    if (m && (put_redacted(o, "charset", m->charset, false, r) != 0 ||
              put_redacted(o, "extract", m->extract, false, r) != 0))
        return -1;
    if (cut) {
        json_object_set_new(o, "total_chars", json_integer((json_int_t)cut->total_chars));
        json_object_set_new(o, "start_index", json_integer((json_int_t)cut->start_index));
        json_object_set_new(o, "truncated", json_boolean(cut->truncated));
        json_object_set_new(o, "next_start_index",
                            cut->truncated ? json_integer((json_int_t)cut->next_start_index)
                                           : json_null());
    }
    return 0;
}

json_t *vf_receipt_page_text(const char *s, size_t len, size_t start_index, size_t max_chars, vf_page_cut *cut)
{
    vf_paginate(s, len, start_index, max_chars, cut);
    char hint[256] = "";
    if (cut->truncated)
        vf_paginate_hint(cut, hint, sizeof hint);
    else if (cut->begin >= len && start_index > 0)
        snprintf(hint, sizeof hint, "[start_index %zu is past the end of the page text (%zu characters).]",
                 start_index, cut->total_chars);
    size_t slice = cut->end - cut->begin, hlen = strlen(hint);
    if (!hlen)
        return json_stringn_nocheck(s + cut->begin, slice);
    char *buf = malloc(slice + 2 + hlen + 1);
    if (!buf)
        return NULL;
    memcpy(buf, s + cut->begin, slice);
    size_t n = slice;
    if (n > 0) {
        memcpy(buf + n, "\n\n", 2);
        n += 2;
    }
    memcpy(buf + n, hint, hlen);
    n += hlen;
    json_t *out = json_stringn_nocheck(buf, n);
    free(buf);
    return out;
}

json_t *vf_receipt_paginate(json_t *text, size_t start_index, size_t max_chars, vf_page_cut *cut)
{
    json_t *out = vf_receipt_page_text(json_string_value(text), json_string_length(text), start_index,
                                       max_chars, cut);
    json_decref(text);
    return out;
}
