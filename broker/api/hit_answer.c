#include "broker/api/hit_answer.h"

#include <stdio.h>
#include <stdlib.h>

#include "broker/api/lookup_log.h"
#include "broker/fleet/fleet_lookup.h"
#include "broker/judge/redact.h"
#include "ipc/ipc_frame.h"

vf_answer vf_hit_answer(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req, char *hit,
                        size_t len, int64_t started_ms)
{
    vf_fleet_count_hit(b, t, started_ms);
    char *url = vf_redact_url(b->redactor, req->url);   /* as a receipt shows it */
    vf_lookup_log_hit(stderr, t->name, url, vf_now_ms() - started_ms);
    free(url);
    return vf_answer_json_text(MHD_HTTP_OK, hit, len);
}
