#include "broker/judge/receipt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/paginate.h"
#include "broker/judge/receipt_meta.h"
#include "broker/judge/safe_text.h"
#include "broker/judge/utf8_text.h"

/* Longest detail or failure line after escaping to printable ASCII. */
#define LINE_MAX_ASCII 600

const char *vf_failure_reason_name(vf_failure_reason r)
{
    switch (r) {
    case VF_FAIL_NO_PROVIDERS: return "no_providers_configured";
    case VF_FAIL_ALL_FAILED: return "all_providers_failed";
    case VF_FAIL_BUDGET_EXHAUSTED: return "attempt_budget_exhausted";
    case VF_FAIL_NONE: break;
    }
    return NULL;
}

/* Redact, then force valid UTF-8 (jansson refuses anything else) without
 * terminal or bidi controls (safe_text.h): a malloc'd copy. The page text
 * usually is clean already (the provider sanitised it and redaction rarely
 * cuts a character), so each cleaning step keeps it in place. */
static char *safe_text(const vf_redactor *r, const char *s, size_t len, size_t *out_len)
{
    char *text = vf_redact_text(r, s, len, out_len);
    if (text && (vf_utf8_sanitize_in_place(&text, out_len) != 0 ||
                 vf_model_text_clean_in_place(&text, out_len) != 0)) {
        free(text);
        return NULL;
    }
    return text;
}

/* A detail or the failure line: redacted, then printable ASCII, bounded. */
static json_t *safe_line(const vf_redactor *r, const char *s, size_t len)
{
    size_t rlen = 0;
    char *red = vf_redact_text(r, s, len, &rlen);
    if (!red)
        return NULL;
    char line[LINE_MAX_ASCII + 1];
    vf_ascii_line(red, rlen, line, sizeof line);
    free(red);
    return json_string(line);
}

static json_t *safe_url(const vf_redactor *r, const char *url)
{
    char *red = vf_redact_url(r, url);
    if (!red)
        return NULL;
    size_t clean_len = 0;
    char *clean = vf_utf8_sanitize(red, strlen(red), &clean_len);
    free(red);
    if (!clean)
        return NULL;
    json_t *j = json_stringn_nocheck(clean, clean_len);
    free(clean);
    return j;
}

static json_t *attempt_json(const vf_attempt_record *a, const vf_redactor *r)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "provider", json_string(a->provider));
    json_object_set_new(o, "outcome", json_string(vf_outcome_name(a->outcome)));
    json_object_set_new(o, "http_status", a->http_status > 0 ? json_integer(a->http_status) : json_null());
    json_t *detail = safe_line(r, a->detail, strlen(a->detail));
    if (!detail) {
        json_decref(o);
        return NULL;
    }
    json_object_set_new(o, "detail", detail);
    const char *wall = vf_wall_name(a->wall);
    json_object_set_new(o, "wall", wall ? json_string(wall) : json_null());
    return o;
}

static json_t *receipt_json(const vf_receipt_input *in, const vf_redactor *r, size_t content_chars,
                            const vf_page_cut *cut)
{
    json_t *o = json_object();
    json_t *log = json_array();
    json_t *url = safe_url(r, in->url);
    if (!o || !log || !url)
        goto oom;
    bool ok = in->failure == VF_FAIL_NONE;
    json_object_set_new(o, "schema", json_string(VF_RECEIPT_SCHEMA));
    json_object_set_new(o, "ok", json_boolean(ok));
    json_object_set_new(o, "url", url);
    url = NULL;
    json_object_set_new(o, "attempts", json_integer((json_int_t)in->n_attempts));
    json_object_set_new(o, "max_attempts", json_integer(in->max_attempts));
    json_object_set_new(o, "providers_available", json_integer(in->providers_available));
    json_object_set_new(o, "provider_used", ok && in->provider_used ? json_string(in->provider_used) : json_null());
    /* The seed's meaning: more than one provider was attempted, not "rescued". */
    json_object_set_new(o, "fallback_used", json_boolean(in->n_attempts > 1));
    const char *reason = vf_failure_reason_name(in->failure);
    json_object_set_new(o, "failure_reason", reason ? json_string(reason) : json_null());
    json_object_set_new(o, "content_chars", json_integer((json_int_t)content_chars));
    for (size_t i = 0; i < in->n_attempts; i++) {
        json_t *a = attempt_json(&in->log[i], r);
        if (!a)
            goto oom;
        json_array_append_new(log, a);
    }
    json_object_set_new(o, "attempts_log", log);
    log = NULL;
    /* Additive fields (documented in README). */
    if (in->final_url) {
        json_t *fu = safe_url(r, in->final_url);
        if (!fu)
            goto oom;
        json_object_set_new(o, "final_url", fu);
    }
    if (in->tenant)
        json_object_set_new(o, "tenant", json_string(in->tenant));
    if (in->order_reason)
        json_object_set_new(o, "provider_order_reason", json_string(in->order_reason));
    json_object_set_new(o, "thin", json_boolean(ok && in->thin));
    if (in->queue_ms >= 0)
        json_object_set_new(o, "queue_ms", json_integer((json_int_t)in->queue_ms));
    if (ok && vf_receipt_add_page_fields(o, in->meta, in->content_type, cut, r) != 0)
        goto oom;
    return o;
oom:
    json_decref(o);
    json_decref(log);
    json_decref(url);
    return NULL;
}

/* One line a model that never sees "status" still cannot misread. */
static json_t *failure_line(const vf_receipt_input *in, const vf_redactor *r)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "LOOKUP FAILED: %s after %zu attempt%s",
                     vf_failure_reason_name(in->failure), in->n_attempts,
                     in->n_attempts == 1 ? "" : "s");
    if (in->n_attempts > 0 && n > 0 && (size_t)n < sizeof line) {
        const vf_attempt_record *last = &in->log[in->n_attempts - 1];
        snprintf(line + n, sizeof line - (size_t)n, "; last: %s %s (%.200s)", last->provider,
                 vf_outcome_name(last->outcome), last->detail);
    }
    return safe_line(r, line, strlen(line));
}

json_t *vf_tool_result_build(const vf_receipt_input *in, const vf_redactor *r)
{
    bool ok = in->failure == VF_FAIL_NONE;
    json_t *text_block_value = NULL;
    size_t content_chars = 0;
    vf_page_cut cut_store, *cut = NULL;
    if (ok) {
        /* Already redacted text is not redacted twice: the verdict was judged
         * on exactly this text. */
        const char *text = in->text ? in->text : "";
        size_t len = in->text ? in->text_len : 0;
        char *owned = in->text_is_redacted ? NULL : safe_text(r, text, len, &len);
        if (owned)
            text = owned;
        if (!in->text_is_redacted && !owned) {
            text_block_value = NULL;
        } else if (in->max_chars > 0) {
            /* Only the page asked for becomes JSON, not the whole text. */
            cut = &cut_store;
            text_block_value = vf_receipt_page_text(text, len, in->start_index, in->max_chars, cut);
        } else {
            text_block_value = json_stringn_nocheck(text, len);
        }
        free(owned);
        /* Characters of the text block as returned, continuation hint included. */
        if (text_block_value)
            content_chars = vf_utf8_count(json_string_value(text_block_value),
                                          json_string_length(text_block_value));
    } else {
        text_block_value = failure_line(in, r);
    }
    json_t *receipt = text_block_value ? receipt_json(in, r, content_chars, cut) : NULL;
    json_t *result = json_object();
    json_t *content = json_array();
    if (!receipt || !result || !content) {
        json_decref(text_block_value);
        json_decref(receipt);
        json_decref(result);
        json_decref(content);
        return NULL;
    }
    json_t *json_block = json_object();
    json_t *text_block = json_object();
    json_object_set_new(json_block, "json", receipt);
    json_object_set_new(text_block, "text", text_block_value);
    json_array_append_new(content, json_block);
    json_array_append_new(content, text_block);
    json_object_set_new(result, "status", json_string(ok ? "success" : "error"));
    json_object_set_new(result, "content", content);
    return result;
}
