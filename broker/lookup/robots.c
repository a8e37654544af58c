#include "broker/lookup/robots.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/lookup/robots_cache.h"
#include "broker/lookup/robots_rules.h"
#include "ipc/ipc_frame.h"

/* The URL's origin, robots.txt URL and path+query; 0 or -1 (not a URL). */
static int split_url(const char *url, char **origin, char **robots_url, char **path_query)
{
    enum { SCHEME, HOST, PORT, PATH, QUERY, N_PARTS };
    static const CURLUPart which[N_PARTS] = { CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT, CURLUPART_PATH,
                                              CURLUPART_QUERY };
    char *part[N_PARTS] = { 0 };
    CURLU *u = curl_url();
    bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK;
    for (int i = 0; ok && i < N_PARTS; i++)   /* only the query may be absent */
        ok = curl_url_get(u, which[i], &part[i], i == PORT ? CURLU_DEFAULT_PORT : 0) == CURLUE_OK || i == QUERY;
    *origin = *robots_url = *path_query = NULL;
    const char *q = part[QUERY];
    if (ok && (asprintf(origin, "%s://%s:%s", part[SCHEME], part[HOST], part[PORT]) < 0 ||
               asprintf(robots_url, "%s://%s:%s/robots.txt", part[SCHEME], part[HOST], part[PORT]) < 0 ||
               asprintf(path_query, "%s%s%s", part[PATH], q ? "?" : "", q ? q : "") < 0))
        ok = false;
    for (int i = 0; i < N_PARTS; i++)
        curl_free(part[i]);
    curl_url_cleanup(u);
    return ok ? 0 : -1;
}

static bool refuse(vf_fetch_outcome *out, const char *fmt, const char *a, const char *b)
{
    out->forced = VF_OUTCOME_UNUSABLE_CONTENT;
    snprintf(out->detail, sizeof out->detail, fmt, a, b);
    return false;
}

bool vf_robots_permit(const vf_broker *b, const vf_tenant_config *tenant, const char *url, int64_t deadline_ms,
                      int cancel_fd, vf_robots_fetch_fn fetch, vf_fetch_outcome *out)
{
    char *origin, *robots_url, *path_query;
    if (tenant->robots_ignore || !b->rt->robots || split_url(url, &origin, &robots_url, &path_query) != 0)
        return true;   /* not a URL: the fetch itself says so */
    bool found, allowed = true, cacheable = true;
    char *rules;
    size_t len;
    vf_robots_cache_get(b->rt->robots, origin, (int64_t)vf_tenant_robots_ttl_s(tenant) * 1000, &found, &rules, &len);
    if (!found) {
        /* The same path as a page, without asking robots.txt about robots.txt. */
        vf_tenant_config fetcher = *tenant;
        fetcher.robots_ignore = true;
        vf_fetch_outcome ro;
        fetch(b, &fetcher, robots_url, deadline_ms, cancel_fd, &ro);
        char status[16];
        snprintf(status, sizeof status, "%d", ro.http_status);
        if (ro.http_status >= 200 && ro.http_status < 300 && ro.text) {
            rules = ro.text;
            len = ro.text_len;
            ro.text = NULL;
        } else if (ro.http_status >= 500) {
            allowed = refuse(out, "robots.txt disallows everything while it answers HTTP %s%s (RFC 9309)",
                             status, "");
            cacheable = false;
        } else if (ro.http_status == 0) {
            cacheable = false;   /* unreachable: the page fetch reports why */
        }
        if (cacheable)
            vf_robots_cache_put(b->rt->robots, origin, rules, len);
        vf_fetch_outcome_free(&ro);
    }
    if (allowed && rules) {
        char token[64], rule[256];
        vf_robots_product_token(vf_tenant_user_agent(tenant), token, sizeof token);
        if (!vf_robots_allows(rules, len, token, path_query, rule, sizeof rule))
            allowed = refuse(out, "robots.txt disallows this URL for %s (%s)", token, rule);
    }
    free(rules);
    free(origin);
    free(robots_url);
    free(path_query);
    return allowed;
}
