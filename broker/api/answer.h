/* An HTTP answer built away from the connection (a lookup thread builds it,
 * the server thread sends it once the connection is resumed). */
#ifndef VERIFETCH_ANSWER_H
#define VERIFETCH_ANSWER_H

#include <jansson.h>
#include <microhttpd.h>

#include "broker/api/metrics.h"
#include "broker/api/quota.h"

typedef struct {
    unsigned status;
    json_t *doc;            /* owned; NULL = empty body (202) unless text */
    char *text;             /* owned; JSON text sent as is instead of doc */
    size_t text_len;
    unsigned retry_after;   /* seconds; 0 = no Retry-After header */
} vf_answer;

/* {"error":{"field","message"}} */
vf_answer vf_answer_error(unsigned status, const char *field, const char *message);
/* 429 or 503 with Retry-After and {"error":{"field":"","message","retry_after"}} */
vf_answer vf_answer_busy(unsigned status, unsigned retry_after, const char *why);
/* 429 for a lookup the tenant's quota refused, counted and logged. */
vf_answer vf_answer_throttled(vf_metrics *m, const char *tenant, vf_quota_verdict v, unsigned retry_after);
/* A body that is JSON text already (takes text, malloc'd). */
vf_answer vf_answer_json_text(unsigned status, char *text, size_t len);
/* Queue it on c (takes a->doc or a->text). */
enum MHD_Result vf_answer_send(struct MHD_Connection *c, vf_answer *a);
void vf_answer_clear(vf_answer *a);

#endif
