#include "broker/lookup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/direct_provider.h"
#include "broker/keyed_provider.h"
#include "broker/receipt.h"
#include "ipc/ipc_frame.h"

unsigned vf_clamp_attempts(bool given, int requested, unsigned ceiling)
{
    if (ceiling < 1)
        ceiling = 1;
    if (!given)
        return ceiling;
    if (requested < 1)
        return 1;
    return (unsigned)requested > ceiling ? ceiling : (unsigned)requested;
}

static void run_provider(const vf_broker *b, const vf_tenant_config *t, const vf_provider_config *p,
                         const char *url, vf_fetch_outcome *out)
{
    int64_t deadline = vf_now_ms() + t->timeout_ms;
    switch (p->kind) {
    case VF_PROVIDER_DIRECT:
        vf_direct_fetch(b, t, url, deadline, out);
        return;
    case VF_PROVIDER_HTTP_API:
        vf_keyed_fetch(b, t, p, url, deadline, out);
        return;
    }
    memset(out, 0, sizeof *out);
    out->forced = VF_OUTCOME_TRANSPORT_ERROR;
    snprintf(out->detail, sizeof out->detail, "provider kind not supported by this broker");
}

/* Judge one provider's result; true when the page is usable. */
static bool judge(const vf_broker *b, const vf_lookup_request *req, vf_fetch_outcome *f,
                  vf_attempt_record *rec, size_t *chars)
{
    rec->http_status = f->http_status;
    if (f->forced != VF_OUTCOME_OK) {
        rec->outcome = f->forced;
        snprintf(rec->detail, sizeof rec->detail, "%s", f->detail);
        return false;
    }
    vf_classify_input in = {
        .http_status = f->http_status,
        .content_type = f->content_type,
        .text = f->text ? f->text : "",
        .text_len = f->text ? f->text_len : 0,
        .must_contain = req->must_contain,
        .min_chars = req->min_chars,
    };
    rec->outcome = vf_classify(b->classifier, &in, rec->detail, sizeof rec->detail, chars);
    return rec->outcome == VF_OUTCOME_OK;
}

json_t *vf_lookup_run(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req)
{
    unsigned max_attempts = vf_clamp_attempts(req->has_max_attempts, req->max_attempts, t->attempt_ceiling);
    size_t providers = t->n_providers;
    size_t budget = max_attempts < providers ? max_attempts : providers;

    vf_attempt_record log[VF_MAX_ATTEMPT_CEILING];
    size_t n = 0;
    vf_fetch_outcome winner = { 0 };
    const char *used = NULL;
    size_t chars = 0;
    for (size_t i = 0; i < budget && i < VF_MAX_ATTEMPT_CEILING; i++) {
        const vf_provider_config *p = &t->providers[i];
        vf_attempt_record *rec = &log[n++];
        memset(rec, 0, sizeof *rec);
        rec->provider = p->name;
        vf_fetch_outcome f;
        run_provider(b, t, p, req->url, &f);
        if (judge(b, req, &f, rec, &chars)) {
            winner = f;
            used = p->name;
            break;
        }
        vf_fetch_outcome_free(&f);
    }

    vf_failure_reason failure = VF_FAIL_NONE;
    if (!used) {
        if (providers == 0)
            failure = VF_FAIL_NO_PROVIDERS;
        else if (budget < providers)
            failure = VF_FAIL_BUDGET_EXHAUSTED;
        else
            failure = VF_FAIL_ALL_FAILED;
    }
    vf_receipt_input in = {
        .url = req->url,
        .max_attempts = max_attempts,
        .providers_available = (unsigned)providers,
        .log = log,
        .n_attempts = n,
        .provider_used = used,
        .failure = failure,
        .content_chars = chars,
        .text = used ? winner.text : NULL,
        .text_len = used ? winner.text_len : 0,
        .final_url = used ? winner.final_url : NULL,
        .tenant = t->name,
        .order_reason = "static: providers in configured order",
    };
    json_t *result = vf_tool_result_build(&in, b->redactor);
    vf_fetch_outcome_free(&winner);
    return result;
}
