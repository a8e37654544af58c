#include "broker/lookup/keyed_provider.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/local_cause.h"
#include "broker/lookup/credential_proxy.h"
#include "broker/lookup/text_budget.h"
#include "broker/spawn/worker_run.h"
#include "broker/judge/utf8_text.h"
#include "ipc/ipc_frame.h"
#include "policy/egress_target.h"
#include "policy/provider_body.h"

char *vf_keyed_endpoint_url(const char *endpoint_template, const char *target_url)
{
    const char *at = strstr(endpoint_template, "{url}");
    if (!at)   /* a POST provider may carry the target in its body only */
        return strdup(endpoint_template);
    char *enc = curl_easy_escape(NULL, target_url, 0);
    if (!enc)
        return NULL;
    char *out = NULL;
    if (asprintf(&out, "%.*s%s%s", (int)(at - endpoint_template), endpoint_template, enc, at + 5) < 0)
        out = NULL;
    curl_free(enc);
    return out;
}

typedef struct {
    char *scheme, *host, *path, *query;
    uint16_t port;
} endpoint_parts;

static void parts_free(endpoint_parts *e)
{
    curl_free(e->scheme);
    curl_free(e->host);
    curl_free(e->path);
    curl_free(e->query);
}

static int parts_read(const char *url, endpoint_parts *e)
{
    memset(e, 0, sizeof *e);
    CURLU *u = curl_url();
    char *port = NULL;
    int rc = -1;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &e->scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &e->host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PATH, &e->path, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
        curl_url_get(u, CURLUPART_QUERY, &e->query, 0);   /* absent is fine */
        long p = strtol(port, NULL, 10);
        if (p > 0 && p < 65536) {
            e->port = (uint16_t)p;
            rc = 0;
        }
    }
    curl_free(port);
    curl_url_cleanup(u);
    if (rc != 0)
        parts_free(e);
    return rc;
}

static void forced(vf_fetch_outcome *out, vf_outcome o, int status, const char *detail)
{
    out->forced = o;
    out->http_status = status;
    snprintf(out->detail, sizeof out->detail, "%s", detail);
}

/* The broker's own exhaustion (err) before the provider was asked: local,
 * never the provider's circuit. */
static void local_failure(vf_fetch_outcome *out, int err, const char *what)
{
    char detail[VF_DETAIL_MAX];
    forced(out, VF_OUTCOME_TRANSPORT_ERROR, 0, vf_local_detail(detail, sizeof detail, err, false, what));
    out->local = true;
}

/* Turn what the worker and the proxy saw into one outcome. */
static void settle(vf_fetch_outcome *out, int worker_rc, const char *worker_detail, vf_result *res,
                   const vf_credential_proxy *proxy, const char *endpoint)
{
    /* The broker's own exhaustion first: no worker could start (the proxy
     * then saw no request), or no descriptor or memory for the connection
     * to the provider (the worker then saw no answer). */
    bool local = worker_rc == VF_WORKER_RUN_LOCAL || (proxy->failed && proxy->local);
    if (local || worker_rc != 0) {
        bool proxy_says = proxy->failed && worker_rc != VF_WORKER_RUN_LOCAL;
        forced(out, VF_OUTCOME_TRANSPORT_ERROR, 0, proxy_says ? proxy->detail : worker_detail);
        out->local = local;
        return;
    }
    if (res->transport_error) {
        char both[VF_DETAIL_MAX];
        snprintf(both, sizeof both, "%s: %s", res->transport_error, res->detail ? res->detail : "");
        forced(out, VF_OUTCOME_TRANSPORT_ERROR, res->http_status, proxy->failed ? proxy->detail : both);
        return;
    }
    if (res->malformed) {
        forced(out, VF_OUTCOME_MALFORMED_RESPONSE, res->http_status, res->malformed);
        return;
    }
    out->http_status = res->http_status;
    if (res->content_type)
        out->content_type = strdup(res->content_type);
    out->text = vf_utf8_sanitize((const char *)res->text, res->text_len, &out->text_len);
    out->final_url = strdup(endpoint);
    out->meta = res->meta;   /* the title the provider reported, when configured */
    res->meta = NULL;
    if (!out->text)
        forced(out, VF_OUTCOME_TRANSPORT_ERROR, res->http_status, "broker out of memory");
}

/* The target's egress rules, before any provider sees it (egress_target.h).
 * curl's parser normalises IPv4 spellings ("0x7f.1", "2130706433") the way
 * a provider's fetcher would read them. True when the target may go out. */
static bool target_allowed(const vf_egress_policy *egress, const char *url, vf_fetch_outcome *out)
{
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL;
    const char *rule = "unparsable_target";
    char detail[VF_DETAIL_MAX] = "egress denied: the target URL has no host the rules can judge";
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
        long p = strtol(port, NULL, 10);
        if (p > 0 && p < 65536)
            rule = vf_egress_check_target(egress, host, (uint16_t)p, detail, sizeof detail);
    }
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    if (!rule)
        return true;
    out->denied_rule = rule;
    forced(out, VF_OUTCOME_TRANSPORT_ERROR, 0, detail);
    return false;
}

void vf_keyed_fetch(const vf_broker *b, const vf_tenant_config *tenant, const vf_provider_config *provider,
                    const char *url, int64_t deadline_ms, int cancel_fd, vf_fetch_outcome *out)
{
    memset(out, 0, sizeof *out);
    if (!target_allowed(&tenant->egress, url, out))
        return;
    char *endpoint = vf_keyed_endpoint_url(provider->endpoint, url);
    endpoint_parts ep;
    if (!endpoint || parts_read(endpoint, &ep) != 0) {
        forced(out, VF_OUTCOME_TRANSPORT_ERROR, 0, "provider endpoint URL is invalid for this target");
        free(endpoint);
        return;
    }
    char *target = NULL, *worker_url = NULL, *body = NULL;
    int64_t body_left = deadline_ms - vf_now_ms();
    if (provider->body_template &&
        !(body = vf_body_render(provider->body_template, url, (unsigned)(body_left > 1 ? body_left : 1)))) {
        forced(out, VF_OUTCOME_TRANSPORT_ERROR, 0, "provider body could not be built for this target");
        free(endpoint);
        parts_free(&ep);
        return;
    }
    bool tls = strcasecmp(ep.scheme, "https") == 0;
    if (asprintf(&target, "%s%s%s", ep.path, ep.query ? "?" : "", ep.query ? ep.query : "") < 0)
        target = NULL;
    if (target && asprintf(&worker_url, "http://%s:%u%s", ep.host, ep.port, target) < 0)
        worker_url = NULL;
    int sv[2] = { -1, -1 };
    if (!target || !worker_url) {
        local_failure(out, ENOMEM, "cannot build the provider request");
        goto done;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        int err = errno;
        if (vf_local_exhaustion(err))
            local_failure(out, err, "cannot create the provider channel");
        else
            forced(out, VF_OUTCOME_TRANSPORT_ERROR, 0, "broker could not prepare the provider channel");
        goto done;
    }
    vf_credential_proxy proxy = {
        .worker_fd = sv[0], .provider = provider, .egress = &tenant->egress,
        .tls_ctx = tls ? b->upstream_tls : NULL, .host = ep.host, .port = ep.port,
        .expected_target = target, .body = body,
        .mask = (const char *const *)b->mask.forms, .mask_lens = b->mask.lens, .n_mask = b->mask.n,
        .max_response = tenant->max_body_bytes + VF_IPC_RESULT_OVERHEAD, .deadline_ms = deadline_ms,
    };
    int started = vf_credential_proxy_start(&proxy);
    if (started != 0) {
        if (vf_local_exhaustion(started))
            local_failure(out, started, "cannot start the credential proxy");
        else
            forced(out, VF_OUTCOME_TRANSPORT_ERROR, 0, "broker could not start the credential proxy");
        goto done;
    }
    int64_t left = deadline_ms - vf_now_ms();
    vf_job job = {
        .url = worker_url,
        /* Placeholder address: the "connection" is our socketpair. */
        .connect_ip = (char *)"127.0.0.1",
        .port = ep.port,
        .timeout_ms = (uint32_t)(left > 1 ? left : 1),
        .max_body = tenant->max_body_bytes,
        .mode = provider->mode,
        .json_pointer = provider->json_pointer,
        .title_pointer = provider->title_pointer,
        .field = provider->json_field,
    };
    vf_worker_timing timing = { 0 };
    /* Room for a large page's text is asked for before its frame is read. */
    vf_text_budget_wait room = { .deadline_ms = deadline_ms, .cancel_fd = cancel_fd };
    vf_worker_spec spec = { .path = b->cfg->worker_path, .test_hook = b->cfg->test_hook,
                            .required_layers = b->required_layers, .timing = &timing,
                            .has_cancel = cancel_fd >= 0, .cancel_fd = cancel_fd,
                            .result_gate = vf_text_budget_gate, .result_gate_ctx = &room };
    vf_result res;
    char detail[VF_DETAIL_MAX];
    vf_metrics_workers_add(b->rt->metrics, 1);
    int rc = vf_worker_run(&spec, &job, sv[1], deadline_ms, &res, detail, sizeof detail);
    vf_metrics_workers_add(b->rt->metrics, -1);
    if (timing.started)
        vf_metrics_observe_spawn(b->rt->metrics, timing.spawn_seconds);
    close(sv[1]);
    sv[1] = -1;
    vf_credential_proxy_finish(&proxy);
    settle(out, rc, detail, &res, &proxy, endpoint);
    if (rc == 0)
        vf_result_free(&res);
done:
    if (sv[0] >= 0)
        close(sv[0]);
    if (sv[1] >= 0)
        close(sv[1]);
    free(target);
    free(worker_url);
    free(body);
    free(endpoint);
    parts_free(&ep);
}
