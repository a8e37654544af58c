#include "broker/lookup/lookup.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/lookup/cancel.h"
#include "broker/lookup/direct_provider.h"
#include "broker/lookup/keyed_provider.h"
#include "broker/judge/page_evidence.h"
#include "broker/fleet/fleet.h"
#include "broker/fleet/fleet_lookup.h"
#include "broker/lookup/page_budget.h"
#include "broker/lookup/text_budget.h"
#include "broker/judge/receipt.h"
#include "broker/spawn/worker_slot.h"
#include "ipc/ipc_frame.h"
#include "policy/ordering.h"

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

/* The lookup holds its worker slot already: the attempt's own budget starts
 * now, never eaten by the queue. */
static void run_provider(const vf_broker *b, const vf_tenant_config *t, const vf_provider_config *p,
                         const vf_lookup_request *req, vf_fetch_outcome *out)
{
    int64_t deadline = vf_now_ms() + t->timeout_ms;
    int cancel_fd = vf_cancel_fd(req->cancel);
    switch (p->kind) {
    case VF_PROVIDER_DIRECT:
        vf_direct_fetch(b, t, req->url, req->render, deadline, cancel_fd, out);
        return;
    case VF_PROVIDER_HTTP_API:
        vf_keyed_fetch(b, t, p, req->url, deadline, cancel_fd, out);
        return;
    }
    memset(out, 0, sizeof *out);
    out->forced = VF_OUTCOME_TRANSPORT_ERROR;
    snprintf(out->detail, sizeof out->detail, "provider kind not supported by this broker");
}

/* Judge one provider's result; true when the page is usable. The text was
 * redacted before (vf_page_redact_within) and is judged as redacted: must_contain, min_chars and
 * content_chars then see exactly what the caller will, so they cannot be
 * used as an oracle on hidden text. */
static bool judge(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req,
                  vf_fetch_outcome *f, vf_attempt_record *rec, size_t *chars, bool *thin)
{
    rec->http_status = f->http_status;
    if (f->forced != VF_OUTCOME_OK) {
        rec->outcome = f->forced;
        snprintf(rec->detail, sizeof rec->detail, "%s", f->detail);
        return false;
    }
    vf_page_evidence ev;
    vf_classify_input in = {
        .http_status = f->http_status,
        .content_type = f->content_type,
        .text = f->text ? f->text : "",
        .text_len = f->text ? f->text_len : 0,
        .must_contain = req->must_contain,
        .must_contain_exact = req->must_contain_exact,
        .min_chars = req->min_chars,
        .page = vf_page_evidence_from_meta(f->meta, &ev),
        .disabled_walls = t->classify_disabled,
    };
    vf_verdict *v = malloc(sizeof *v);
    if (!v) {
        rec->outcome = VF_OUTCOME_TRANSPORT_ERROR;
        snprintf(rec->detail, sizeof rec->detail, "broker out of memory");
        return false;
    }
    vf_classify_verdict(b->classifier, &in, v);
    rec->outcome = v->outcome;
    rec->wall = v->wall;
    snprintf(rec->detail, sizeof rec->detail, "%s", v->detail);
    *chars = v->content_chars;
    *thin = v->thin;
    free(v);
    return rec->outcome == VF_OUTCOME_OK;
}

/* Host of the requested URL for domain rules and host-scoped health. */
static char *request_host(const char *url)
{
    CURLU *u = curl_url();
    char *host = NULL, *copy = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        size_t n = strlen(host);
        copy = n >= 2 && host[0] == '[' ? strndup(host + 1, n - 2) : strdup(host);
    }
    curl_free(host);
    curl_url_cleanup(u);
    return copy;
}

typedef struct {
    vf_attempt_record log[VF_MAX_ATTEMPT_CEILING];
    size_t n;
    vf_fetch_outcome winner;
    const char *used;
    size_t chars;
    bool thin;
    unsigned key_throttled;      /* providers skipped: their key's quota is used up */
    unsigned key_retry_after_s;  /* the soonest of those keys frees up */
} attempt_run;

static void attempt_all(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req,
                        vf_order *order, size_t budget, attempt_run *run)
{
    vf_runtime *rt = b->rt;
    for (size_t i = 0; i < order->n && i < budget && run->n < VF_MAX_ATTEMPT_CEILING; i++) {
        const vf_provider_config *p = &t->providers[order->index[i]];
        unsigned key_wait = 0;
        if (!vf_fleet_provider_acquire(rt->fleet, t, p, &key_wait)) {
            if (!run->key_throttled++ || key_wait < run->key_retry_after_s)
                run->key_retry_after_s = key_wait;
            continue;
        }
        vf_attempt_record *rec = &run->log[run->n++];
        memset(rec, 0, sizeof *rec);
        rec->provider = p->name;
        int64_t started = vf_now_ms();
        vf_fetch_outcome f;
        run_provider(b, t, p, req, &f);
        vf_fleet_provider_release(rt->fleet, t, p);
        if (vf_cancel_fired(req->cancel)) {
            /* Nobody reads the answer: no more attempts, nothing held against the provider. */
            rec->outcome = VF_OUTCOME_TRANSPORT_ERROR;
            snprintf(rec->detail, sizeof rec->detail, "cancelled: the client went away");
            vf_fetch_outcome_free(&f);
            vf_text_budget_release();
            return;
        }
        vf_page_redact_within(b->redactor, &f, vf_postprocess_deadline(started + t->timeout_ms, vf_now_ms()));
        bool ok = judge(b, t, req, &f, rec, &run->chars, &run->thin);
        int64_t now = vf_now_ms();
        if (order->has_tickets && !f.local)
            vf_circuit_record(rt->circuits, &order->ticket[i], (vf_health_outcome)rec->outcome, now - started,
                              (uint64_t)now);
        vf_metrics_count_attempt(rt->metrics, t->name, p->name, rec->outcome);
        if (f.denied_rule)
            vf_metrics_count_egress_denial(rt->metrics, t->name, f.denied_rule);
        if (ok) {
            run->winner = f;
            run->used = p->name;
            return;
        }
        vf_fetch_outcome_free(&f);
        vf_text_budget_release();   /* the next attempt may have to wait its turn */
    }
}

/* Every provider was skipped for its key's quota: the caller answers 429. */
static json_t *key_throttled(const attempt_run *run)
{
    return json_pack("{s:{s:s, s:s, s:i}}", "error", "field", "", "message",
                     "provider key quota exceeded (shared by every tenant and instance using the key)",
                     "retry_after", (int)(run->key_retry_after_s ? run->key_retry_after_s : 1));
}

bool vf_lookup_throttled(const json_t *result, unsigned *retry_after_s)
{
    json_t *err = json_object_get(result, "error");
    json_t *ra = json_object_get(err, "retry_after");
    if (!json_is_integer(ra))
        return false;
    *retry_after_s = json_integer_value(ra) > 0 ? (unsigned)json_integer_value(ra) : 1;
    return true;
}

/* Slot first, then connect: the lookup waits (FIFO) for a worker slot before
 * any origin connection exists, within its own queue budget (the tenant's
 * timeout). False when none came: the log then says which budget ran out. */
static bool queue_for_slot(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req,
                           const vf_order *order, attempt_run *run, long long *queue_ms)
{
    int64_t queued = vf_now_ms();
    vf_slot_rc sr = vf_worker_slot_take(&b->rt->worker_slots, queued + t->timeout_ms, vf_cancel_fd(req->cancel));
    *queue_ms = vf_now_ms() - queued;
    if (sr == VF_SLOT_TAKEN)
        return true;
    if (order->n == 0)
        return false;
    vf_attempt_record *rec = &run->log[run->n++];
    memset(rec, 0, sizeof *rec);
    rec->provider = t->providers[order->index[0]].name;
    rec->outcome = VF_OUTCOME_TRANSPORT_ERROR;
    if (sr == VF_SLOT_CANCELLED)
        snprintf(rec->detail, sizeof rec->detail, "cancelled: the client went away while queued for a worker");
    else
        snprintf(rec->detail, sizeof rec->detail,
                 "queue budget ran out: no worker slot free within %u ms (the fetch never started)", t->timeout_ms);
    return false;
}

static json_t *lookup_uncached(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req,
                               char **cache_control)
{
    int64_t started = vf_now_ms();
    unsigned max_attempts = vf_clamp_attempts(req->has_max_attempts, req->max_attempts, t->attempt_ceiling);
    size_t providers = t->n_providers;
    size_t budget = max_attempts < providers ? max_attempts : providers;

    char *host = request_host(req->url);
    vf_order_input oin = {
        .tenant = t->name, .providers = t->providers, .n_providers = providers, .host = host,
        .cfg = &t->ordering, .circuits = b->rt->circuits, .now_ms = (uint64_t)started, .limit = budget,
    };
    vf_order order;
    if (vf_order_compute(&oin, &order) != 0) {
        /* Ordering is advisory: fall back to configured order, untracked. */
        memset(&order, 0, sizeof order);
        for (size_t i = 0; i < providers && i < VF_ORDER_MAX; i++)
            order.index[order.n++] = i;
        snprintf(order.reason, sizeof order.reason, "static (ordering failed)");
    }
    attempt_run run = { 0 };
    long long queue_ms = 0;
    if (queue_for_slot(b, t, req, &order, &run, &queue_ms)) {
        attempt_all(b, t, req, &order, budget, &run);
        vf_worker_slot_give(&b->rt->worker_slots);
    }
    vf_order_release_unused(&order, b->rt->circuits);
    if (run.n == 0 && run.key_throttled) {
        free(host);
        return key_throttled(&run);
    }
    if (cache_control && run.used && run.winner.cache_control)
        *cache_control = strdup(run.winner.cache_control);

    vf_failure_reason failure = VF_FAIL_NONE;
    if (!run.used) {
        if (providers == 0)
            failure = VF_FAIL_NO_PROVIDERS;
        else if (budget < providers && run.n == budget)
            failure = VF_FAIL_BUDGET_EXHAUSTED;
        else
            failure = VF_FAIL_ALL_FAILED;
    }
    vf_receipt_input in = {
        .url = req->url,
        .max_attempts = max_attempts,
        .providers_available = (unsigned)providers,
        .log = run.log,
        .n_attempts = run.n,
        .provider_used = run.used,
        .failure = failure,
        .content_chars = run.chars,
        .thin = run.used && run.thin,
        .text = run.used ? run.winner.text : NULL,
        .text_len = run.used ? run.winner.text_len : 0,
        .text_is_redacted = true,
        .final_url = run.used ? run.winner.final_url : NULL,
        .tenant = t->name,
        .order_reason = order.reason,
        .meta = run.used ? run.winner.meta : NULL,
        .content_type = run.used ? run.winner.content_type : NULL,
        .max_chars = req->max_chars,
        .start_index = req->start_index,
        .queue_ms = queue_ms,
    };
    json_t *result = vf_tool_result_build(&in, b->redactor);
    vf_fetch_outcome_free(&run.winner);
    free(host);
    vf_metrics_count_lookup(b->rt->metrics, t->name, run.used ? VF_LOOKUP_SUCCESS : VF_LOOKUP_ERROR);
    vf_metrics_observe_lookup(b->rt->metrics, t->name, (double)(vf_now_ms() - started) / 1000.0);
    return result;
}

json_t *vf_lookup_run(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req)
{
    json_t *result = vf_fleet_lookup(b, t, req, lookup_uncached);
    /* The page text is gone (only the page asked for is in the answer). */
    vf_text_budget_release();
    return result;
}
