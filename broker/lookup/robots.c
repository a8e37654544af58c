#include "broker/lookup/robots.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/spawn/cancel_wait.h"
#include "broker/lookup/robots_cache.h"
#include "broker/lookup/robots_flight.h"
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

/* Fetches origin's robots.txt (as the leader of its flight) and stores what
 * is cacheable. Returns the HTTP status (0 = unreachable); *rules takes the
 * text of a 2xx answer. */
static int fetch_robots(const vf_broker *b, const vf_tenant_config *tenant, const char *origin,
                        const char *robots_url, int64_t deadline_ms, int cancel_fd, vf_robots_fetch_fn fetch,
                        char **rules, size_t *len)
{
    /* The same path as a page, without asking robots.txt about robots.txt. */
    vf_tenant_config fetcher = *tenant;
    fetcher.robots_ignore = true;
    vf_fetch_outcome ro;
    fetch(b, &fetcher, robots_url, deadline_ms, cancel_fd, &ro);
    int status = ro.http_status;
    if (status >= 200 && status < 300 && ro.text) {
        *rules = ro.text;
        *len = ro.text_len;
        ro.text = NULL;
    }
    /* 5xx is asked again next time; unreachable decides nothing. */
    if (status > 0 && status < 500)
        vf_robots_cache_put(b->rt->robots, origin, *rules, *len);
    vf_fetch_outcome_free(&ro);
    return status;
}

/* The verdict on origin's robots.txt: *rules (NULL = allow all) and true,
 * or false when it disallows everything (*status the 5xx it answered).
 * One fetch per origin at a time: a lookup that finds another fetching
 * waits for its answer. */
static bool robots_answer(const vf_broker *b, const vf_tenant_config *tenant, const char *origin,
                          const char *robots_url, int64_t deadline_ms, int cancel_fd, vf_robots_fetch_fn fetch,
                          char **rules, size_t *len, int *status)
{
    int64_t ttl_ms = (int64_t)vf_tenant_robots_ttl_s(tenant) * 1000;
    bool found;
    for (;;) {
        vf_robots_cache_get(b->rt->robots, origin, ttl_ms, &found, rules, len);
        if (found)
            return true;
        if (vf_robots_flight_join(b->rt->robots_flights, origin, deadline_ms, cancel_fd, status)) {
            /* Another flight may have landed between the miss and the join. */
            vf_robots_cache_get(b->rt->robots, origin, ttl_ms, &found, rules, len);
            if (found) {
                vf_robots_flight_land(b->rt->robots_flights, origin, 200);
                return true;
            }
            *status = fetch_robots(b, tenant, origin, robots_url, deadline_ms, cancel_fd, fetch, rules, len);
            /* A cancelled leader's "unreachable" says nothing about the origin. */
            bool gone = *status == 0 && vf_cancel_fd_fired(cancel_fd);
            vf_robots_flight_land(b->rt->robots_flights, origin, gone ? VF_ROBOTS_FLIGHT_AGAIN : *status);
            return *status < 500;
        }
        /* The leader landed: its cacheable answer is in the cache. */
        if (*status >= 500)
            return false;
        if (*status == 0 || *status == VF_ROBOTS_FLIGHT_GAVE_UP)
            return true;   /* unreachable, or out of time: the page fetch says why */
        /* AGAIN, or a cacheable answer that did not stay cached: ask again. */
    }
}

bool vf_robots_permit(const vf_broker *b, const vf_tenant_config *tenant, const char *url, int64_t deadline_ms,
                      int cancel_fd, vf_robots_fetch_fn fetch, vf_fetch_outcome *out)
{
    char *origin, *robots_url, *path_query;
    if (tenant->robots_ignore || !b->rt->robots || !b->rt->robots_flights || split_url(url, &origin, &robots_url, &path_query) != 0)
        return true;   /* not a URL: the fetch itself says so */
    char *rules = NULL;
    size_t len = 0;
    int status = 0;
    bool allowed =
        robots_answer(b, tenant, origin, robots_url, deadline_ms, cancel_fd, fetch, &rules, &len, &status);
    if (!allowed) {
        char code[16];
        snprintf(code, sizeof code, "%d", status);
        refuse(out, "robots.txt disallows everything while it answers HTTP %s%s (RFC 9309)", code, "");
    } else if (rules) {
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
