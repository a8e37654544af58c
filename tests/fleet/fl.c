#include "fl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

void fl_start_brokers(pol_broker *b, int n, const rp_redis *r, const char *tenants, bool world_socket)
{
    char root[256];
    pol_fmt(root, sizeof root, "state = { redis = \"%s\"; key_prefix = \"vftest:\"; };", r->url);
    for (int i = 0; i < n; i++) {
        pol_broker_opts o = { .tenants = tenants, .root_extra = root, .world_socket = world_socket };
        pol_broker_start(&b[i], &o);
    }
}

hx_response fl_lookup(const pol_broker *b, uid_t uid, const hx_origin *o, const char *path, const char *extra,
                      char *retry_after, size_t ra_len)
{
    char url[512], body[1024];
    hx_origin_url(o, false, path, url, sizeof url);
    snprintf(body, sizeof body, "{\"url\": \"%s\"%s}", url, extra ? extra : "");
    if (uid != 0)
        return pol_request_as(b, uid, "POST", "/v1/lookup", body);
    pol_req q = { .method = "POST", .path = "/v1/lookup", .body = body };
    return pol_http(b, &q, retry_after, ra_len);
}

int fl_origin_requests(const hx_origin *o, const char *needle)
{
    char *log = hx_read_file(o->log_path, NULL);
    int n = 0;
    for (const char *p = log; p && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    free(log);
    return n;
}

const char *fl_cache_field(const hx_response *r)
{
    json_t *receipt = hx_receipt(r);
    return receipt ? json_string_value(json_object_get(receipt, "cache")) : NULL;
}

char *fl_state(const pol_broker *b)
{
    hx_response r = hx_request(&b->hx, "GET", "/v1/health", NULL, 0);
    const char *s = r.json ? json_string_value(json_object_get(r.json, "state")) : NULL;
    char *copy = strdup(s ? s : "(none)");
    hx_response_free(&r);
    return copy;
}
