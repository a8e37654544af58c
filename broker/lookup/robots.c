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
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *query = NULL;
    int rc = -1;
    *origin = *robots_url = *path_query = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK) {
        curl_url_get(u, CURLUPART_QUERY, &query, 0);
        if (asprintf(origin, "%s://%s:%s", scheme, host, port) < 0 ||
            asprintf(robots_url, "%s://%s:%s/robots.txt", scheme, host, port) < 0 ||
            asprintf(path_query, "%s%s%s", path, query ? "?" : "", query ? query : "") < 0)
            *origin = *robots_url = *path_query = NULL;
        else
            rc = 0;
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(query);
    curl_url_cleanup(u);
    return rc;
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
