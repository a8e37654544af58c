#include "broker/lookup/direct_provider.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "broker/spawn/cancel_wait.h"
#include "broker/lookup/resolve_connect.h"
#include "broker/lookup/robots.h"
#include "broker/lookup/text_budget.h"
#include "broker/lookup/url_ascii.h"
#include "broker/spawn/worker_run.h"
#include "broker/judge/utf8_text.h"
#include "ipc/ipc_frame.h"

static void force(vf_fetch_outcome *out, vf_outcome outcome, int status, const char *fmt, const char *a,
                  const char *b)
{
    out->forced = outcome;
    out->http_status = status;
    snprintf(out->detail, sizeof out->detail, fmt, a, b);
}

static bool is_redirect(int status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

typedef struct {
    char *url;
    char *scheme;
    char *host;
    uint16_t port;
} hop_target;

static void hop_target_free(hop_target *h)
{
    curl_free(h->url);
    curl_free(h->scheme);
    curl_free(h->host);
    memset(h, 0, sizeof *h);
}

static int hop_target_read(CURLU *u, hop_target *h)
{
    char *port = NULL;
    memset(h, 0, sizeof *h);
    if (curl_url_get(u, CURLUPART_URL, &h->url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &h->scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &h->host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
        hop_target_free(h);
        curl_free(port);
        return -1;
    }
    long p = strtol(port, NULL, 10);
    curl_free(port);
    if (p < 1 || p > 65535) {
        hop_target_free(h);
        return -1;
    }
    h->port = (uint16_t)p;
    return 0;
}

/* One hop: connect under policy, hand the socket to a fresh worker. Returns 0
 * with res filled, or -1 with out forced to the failure. */
static int fetch_hop(const vf_broker *b, const vf_tenant_config *tenant, const hop_target *h,
                     unsigned hop, uint32_t render, int64_t deadline_ms, int cancel_fd, vf_result *res,
                     vf_fetch_outcome *out)
{
    char prefix[48] = "";
    if (hop > 0)
        snprintf(prefix, sizeof prefix, "redirect hop %u: ", hop);

    /* Cancelled while robots.txt was fetched (or between hops): no worker,
     * no connection, so the origin never sees the page requested. */
    if (vf_cancel_fd_fired(cancel_fd)) {
        force(out, VF_OUTCOME_TRANSPORT_ERROR, 0, "%scancelled: the lookup was abandoned%s", prefix, "");
        return -1;
    }
    vf_connection c;
    vf_connect_status cs = vf_resolve_connect(h->host, h->port, &tenant->egress, deadline_ms, &c);
    if (cs != VF_CONNECT_OK) {
        force(out, VF_OUTCOME_TRANSPORT_ERROR, 0, "%s%s", prefix, c.detail);
        out->denied_rule = c.denied_rule;
        out->local = cs == VF_CONNECT_LOCAL;
        return -1;
    }
    int64_t left = deadline_ms - vf_now_ms();
    if (left < 1)
        left = 1;
    bool tls = strcasecmp(h->scheme, "https") == 0;
    char ua_line[300];
    snprintf(ua_line, sizeof ua_line, "User-Agent: %s", vf_tenant_user_agent(tenant));
    char *headers[] = { ua_line };
    vf_job job = {
        .url = h->url,
        .connect_ip = c.ip,
        .port = h->port,
        .timeout_ms = (uint32_t)left,
        .max_body = tenant->max_body_bytes,
        .ca_pem = tls ? b->cfg->ca_pem : NULL,
        .ca_pem_len = tls ? b->cfg->ca_pem_len : 0,
        .mode = VF_MODE_RAW,
        .render = render,
        .headers = headers,
        .n_headers = 1,
    };
    vf_worker_timing timing = { 0 };
    /* Room for a large page's text is asked for before its frame is read. */
    vf_text_budget_wait room = { .deadline_ms = deadline_ms, .cancel_fd = cancel_fd };
    vf_worker_spec spec = { .path = b->cfg->worker_path, .test_hook = b->cfg->test_hook,
                            .required_layers = b->required_layers, .timing = &timing,
                            .has_cancel = cancel_fd >= 0, .cancel_fd = cancel_fd,
                            .result_gate = vf_text_budget_gate, .result_gate_ctx = &room };
    char detail[VF_DETAIL_MAX];
    vf_metrics_workers_add(b->rt->metrics, 1);
    int rc = vf_worker_run(&spec, &job, c.fd, deadline_ms, res, detail, sizeof detail);
    vf_metrics_workers_add(b->rt->metrics, -1);
    if (timing.started)
        vf_metrics_observe_spawn(b->rt->metrics, timing.spawn_seconds);
    close(c.fd);
    if (rc != 0) {
        force(out, VF_OUTCOME_TRANSPORT_ERROR, 0, "%s%s", prefix, detail);
        out->local = rc == VF_WORKER_RUN_LOCAL;
        return -1;
    }
    if (res->transport_error) {
        char both[VF_DETAIL_MAX];
        snprintf(both, sizeof both, "%s: %s", res->transport_error, res->detail ? res->detail : "");
        force(out, VF_OUTCOME_TRANSPORT_ERROR, res->http_status, "%s%s", prefix, both);
        vf_result_free(res);
        return -1;
    }
    if (res->malformed) {
        force(out, VF_OUTCOME_MALFORMED_RESPONSE, res->http_status, "%s%s", prefix, res->malformed);
        vf_result_free(res);
        return -1;
    }
    return 0;
}

static void keep_final(vf_fetch_outcome *out, vf_result *res, const char *url)
{
    out->http_status = res->http_status;
    if (res->content_type)
        out->content_type = strdup(res->content_type);
    if (res->cache_control)
        out->cache_control = strdup(res->cache_control);
    if (res->text && vf_utf8_is_clean((const char *)res->text, res->text_len)) {
        /* Already clean (the common case): keep the decoded bytes, no copy. */
        out->text = (char *)res->text;
        out->text_len = res->text_len;
        res->text = NULL;
        res->text_len = 0;
    } else {
        out->text = vf_utf8_sanitize((const char *)res->text, res->text_len, &out->text_len);
    }
    out->final_url = strdup(url);
    out->meta = res->meta; /* the page's metadata travels on to the receipt */
    res->meta = NULL;
    if (vf_page_meta_has_signal(out->meta, VF_SIGNAL_UNSUPPORTED_CHARSET))
        force(out, VF_OUTCOME_UNUSABLE_CONTENT, res->http_status, "%s%s",
              res->detail ? res->detail : "unsupported charset", "");
    if (!out->text)
        force(out, VF_OUTCOME_TRANSPORT_ERROR, res->http_status, "%s%s", "broker out of memory", "");
}

/* robots.txt comes the way a page does (egress, a confined worker, redirects). */
static void fetch_robots_txt(const vf_broker *b, const vf_tenant_config *tenant, const char *url,
                             int64_t deadline_ms, int cancel_fd, vf_fetch_outcome *out)
{
    vf_direct_fetch(b, tenant, url, VF_RENDER_TEXT, deadline_ms, cancel_fd, out);
}

void vf_direct_fetch(const vf_broker *b, const vf_tenant_config *tenant, const char *url, uint32_t render,
                     int64_t deadline_ms, int cancel_fd, vf_fetch_outcome *out)
{
    memset(out, 0, sizeof *out);
    CURLU *u = curl_url();
    if (!u) {
        force(out, VF_OUTCOME_TRANSPORT_ERROR, 0, "%s%s", "broker out of memory", "");
        return;
    }
    CURLUcode uc = curl_url_set(u, CURLUPART_URL, url, 0);
    if (uc != CURLUE_OK) {
        force(out, VF_OUTCOME_TRANSPORT_ERROR, 0, "invalid URL: %s%s", curl_url_strerror(uc), "");
        curl_url_cleanup(u);
        return;
    }
    for (unsigned hop = 0;; hop++) {
        hop_target h;
        if (hop_target_read(u, &h) != 0) {
            force(out, VF_OUTCOME_TRANSPORT_ERROR, 0, "%s%s", "URL has no usable host or port", "");
            break;
        }
        if (strcasecmp(h.scheme, "http") != 0 && strcasecmp(h.scheme, "https") != 0) {
            force(out, VF_OUTCOME_HTTP_ERROR, 0, "redirect to unsupported scheme '%.32s' refused%s",
                  h.scheme, "");
            hop_target_free(&h);
            break;
        }
        if (!vf_robots_permit(b, tenant, h.url, deadline_ms, cancel_fd, fetch_robots_txt, out)) {
            hop_target_free(&h);
            break;
        }
        vf_result res;
        if (fetch_hop(b, tenant, &h, hop, render, deadline_ms, cancel_fd, &res, out) != 0) {
            hop_target_free(&h);
            break;
        }
        out->redirects = hop;
        if (!is_redirect(res.http_status) || !res.location) {
            keep_final(out, &res, h.url);
            vf_result_free(&res);
            hop_target_free(&h);
            break;
        }
        if (hop >= VF_MAX_REDIRECTS) {
            char status[16];
            snprintf(status, sizeof status, "%d", res.http_status);
            force(out, VF_OUTCOME_HTTP_ERROR, res.http_status,
                  "too many redirects (more than 5; last was HTTP %s)%s", status, "");
            vf_result_free(&res);
            hop_target_free(&h);
            break;
        }
        /* Relative Locations resolve against the current hop, as a browser would. */
        uc = curl_url_set(u, CURLUPART_URL, res.location, 0);
        vf_result_free(&res);
        hop_target_free(&h);
        if (uc != CURLUE_OK) {
            force(out, VF_OUTCOME_HTTP_ERROR, 0, "redirect to an invalid Location (%s)%s",
                  curl_url_strerror(uc), "");
            break;
        }
        const char *why = vf_urlu_ascii_host(u); /* rules and the next worker see one spelling */
        if (why) {
            force(out, VF_OUTCOME_HTTP_ERROR, 0, "redirect refused: %s%s", why, "");
            break;
        }
    }
    curl_url_cleanup(u);
}
