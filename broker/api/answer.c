#include "broker/api/answer.h"

#include <stdio.h>
#include <stdlib.h>

#include "broker/api/json_response.h"
#include "broker/api/lookup_log.h"
#include "broker/memory_tune.h"

vf_answer vf_answer_error(unsigned status, const char *field, const char *message)
{
    vf_answer a = { .status = status,
                    .doc = json_pack("{s:{s:s, s:s}}", "error", "field", field, "message", message) };
    return a;
}

vf_answer vf_answer_busy(unsigned status, unsigned retry_after, const char *why)
{
    vf_answer a = { .status = status, .retry_after = retry_after ? retry_after : 1 };
    a.doc = json_pack("{s:{s:s, s:s, s:i}}", "error", "field", "", "message", why, "retry_after",
                      (int)a.retry_after);
    return a;
}

vf_answer vf_answer_throttled(vf_metrics *m, const char *tenant, vf_quota_verdict v, unsigned retry_after)
{
    vf_metrics_count_lookup(m, tenant, VF_LOOKUP_THROTTLED);
    vf_request_log(stderr, tenant, "throttled", vf_quota_verdict_name(v));
    return vf_answer_busy(MHD_HTTP_TOO_MANY_REQUESTS, retry_after,
                          v == VF_QUOTA_CONCURRENCY ? "too many lookups in flight for this tenant"
                                                    : "requests-per-minute quota exceeded for this tenant");
}

static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r,
                             unsigned retry_after)
{
    if (retry_after) {
        char secs[16];
        snprintf(secs, sizeof secs, "%u", retry_after);
        MHD_add_response_header(r, "Retry-After", secs);
    }
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_text(struct MHD_Connection *c, vf_answer *a)
{
    char *text = a->text;
    a->text = NULL;
    struct MHD_Response *r = MHD_create_response_from_buffer(a->text_len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        vf_answer oom = vf_answer_error(MHD_HTTP_INTERNAL_SERVER_ERROR, "", "broker out of memory");
        return vf_answer_send(c, &oom);
    }
    vf_memory_note_response(a->text_len);
    MHD_add_response_header(r, "Content-Type", "application/json");
    return queue(c, a->status, r, a->retry_after);
}

enum MHD_Result vf_answer_send(struct MHD_Connection *c, vf_answer *a)
{
    if (a->text)
        return send_text(c, a);
    json_t *doc = a->doc;
    a->doc = NULL;
    if (!doc && a->status == MHD_HTTP_ACCEPTED)
        return queue(c, a->status, MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT), 0);
    size_t len = 0;
    struct MHD_Response *r = doc ? vf_json_response(doc, &len) : NULL; /* takes doc */
    vf_memory_note_response(len);
    if (!r) {
        static const char oom[] = "{\"error\":{\"field\":\"\",\"message\":\"broker out of memory\"}}";
        r = MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
        if (!r)
            return MHD_NO;
        MHD_add_response_header(r, "Content-Type", "application/json");
        return queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, r, 0);
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    return queue(c, a->status, r, a->retry_after);
}

vf_answer vf_answer_json_text(unsigned status, char *text, size_t len)
{
    vf_answer a = { .status = status, .text = text, .text_len = len };
    return a;
}

void vf_answer_clear(vf_answer *a)
{
    json_decref(a->doc);
    a->doc = NULL;
    free(a->text);
    a->text = NULL;
}
