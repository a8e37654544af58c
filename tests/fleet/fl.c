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

void fl_start_fleet(rp_redis *r, hx_origin *o, pol_broker *b, int n, const char *tenants, bool world_socket)
{
    rp_start(r, 0);
    hx_origin_start(o, NULL, NULL);
    fl_start_brokers(b, n, r, tenants, world_socket);
}

void fl_start_two_slot_pair(pol_broker b[2], const rp_redis *r, const char *a_quota)
{
    char root[256], tenants[512];
    pol_fmt(root, sizeof root, "state = { redis = \"%s\"; key_prefix = \"vftest:\"; };", r->url);
    pol_fmt(tenants, sizeof tenants,
            "{ name = \"a\"; uids = [ 0 ]; %s " POL_EGRESS_LOOPBACK " },\n"
            "{ name = \"b\"; uids = [ 65534 ]; " POL_EGRESS_LOOPBACK " }",
            a_quota ? a_quota : "");
    pol_broker_opts o = { .tenants = tenants, .root_extra = root, .max_concurrent = 2 };
    pol_broker_start(&b[0], &o);
    pol_broker_start(&b[1], &o);
}

static void *held_run(void *p)
{
    fl_held *h = p;
    h->r = fl_lookup(h->b, 0, h->o, h->path, NULL, h->retry_after, sizeof h->retry_after);
    return NULL;
}

void fl_hold_start(fl_held *h)
{
    h->retry_after[0] = '\0';
    cr_assert_eq(pthread_create(&h->th, NULL, held_run, h), 0, "start the held lookup of %s", h->path);
}

void fl_hold_join(fl_held *h)
{
    pthread_join(h->th, NULL);
}

typedef struct {
    const pol_broker *b;
    const hx_origin *o;
    const char *path;
    int lookups;
    pthread_t th;
    fl_tally tally;
} asker;

static void *ask(void *p)
{
    asker *a = p;
    for (int i = 0; i < a->lookups; i++) {
        char ra[32] = "";
        hx_response r = fl_lookup(a->b, 0, a->o, a->path, NULL, ra, sizeof ra);
        const char *st = r.json ? json_string_value(json_object_get(r.json, "status")) : NULL;
        if (r.status == 200 && st && strcmp(st, "success") == 0)
            a->tally.ok++;
        else if (r.status == 429 && atoi(ra) >= 1)
            a->tally.throttled++;
        else
            a->tally.other++;
        hx_response_free(&r);
    }
    return NULL;
}

fl_tally fl_ask_together(const pol_broker *b, int n, const hx_origin *o, const char *path, int per_broker)
{
    asker a[FL_MAX_BROKERS];
    cr_assert_leq(n, FL_MAX_BROKERS);
    for (int i = 0; i < n; i++) {
        a[i] = (asker){ .b = &b[i], .o = o, .path = path, .lookups = per_broker };
        cr_assert_eq(pthread_create(&a[i].th, NULL, ask, &a[i]), 0);
    }
    fl_tally all = { 0 };
    for (int i = 0; i < n; i++) {
        pthread_join(a[i].th, NULL);
        all.ok += a[i].tally.ok;
        all.throttled += a[i].tally.throttled;
        all.other += a[i].tally.other;
    }
    return all;
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
