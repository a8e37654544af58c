/* The receipt's page fields: metadata the worker read (title, lang,
 * canonical_url, description, published, charset, extract), the response's
 * content_type, and pagination (total_chars, start_index, truncated,
 * next_start_index). Every page-derived string is redacted like the text. */
#ifndef VERIFETCH_JUDGE_RECEIPT_META_H
#define VERIFETCH_JUDGE_RECEIPT_META_H

#include <jansson.h>

#include "broker/judge/paginate.h"
#include "broker/judge/redact.h"
#include "ipc/ipc_page_meta.h"

/* Adds the fields to receipt o (absent ones are left out; cut may be NULL).
 * 0, or -1 when out of memory. */
int vf_receipt_add_page_fields(json_t *o, const vf_page_meta *meta, const char *content_type,
                               const vf_page_cut *cut, const vf_redactor *r);

/* The page of the redacted text s[0..len) asked for (plus the continuation
 * hint when truncated) as a JSON string: only the page is copied, not the
 * text. NULL when out of memory. */
json_t *vf_receipt_page_text(const char *s, size_t len, size_t start_index, size_t max_chars, vf_page_cut *cut);

/* Replaces the redacted text with its page (plus the continuation hint when
 * truncated); steals text, returns the new value or NULL when out of memory. */
json_t *vf_receipt_paginate(json_t *text, size_t start_index, size_t max_chars, vf_page_cut *cut);

#endif
