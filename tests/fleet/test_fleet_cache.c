/* E2E lookup cache: identical concurrent lookups across instances collapse
 * into one origin fetch; hits carry cache/fetched_at; Cache-Control,
 * max_age_s, tenant boundaries, private hosts and errors are honoured; the
 * store holds no URL in key names and no unredacted text. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fl.h"

TestSuite(fleet_cache, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

static rp_redis redis;
static hx_origin origin;
static pol_broker brokers[2];

/* Tenant a sends 20 lookups at once to test coalescing, not quotas: it asks
 * for no concurrency limit instead of the fair share of two tenants. */
#define CACHED_TENANTS                                                                           \
    "{ name = \"a\"; uids = [ 0 ]; quota = { concurrent = 0; }; cache = { max_ttl_s = 60; }; "    \
    POL_EGRESS_LOOPBACK " },\n"                                                                  \
    "{ name = \"b\"; uids = [ 65534 ]; cache = { max_ttl_s = 60; }; " POL_EGRESS_LOOPBACK " }"

static void start_fleet(int n, const char *tenants)
{
    fl_start_fleet(&redis, &origin, brokers, n, tenants, true);
}

static const char *status_of(const hx_response *r)
{
    const char *s = r->json ? json_string_value(json_object_get(r->json, "status")) : NULL;
    return s ? s : "(none)";
}

static void expect_cache(const hx_response *r, const char *want)
{
    cr_assert_eq(r->status, 200, "%ld %s", r->status, r->body);
    const char *got = fl_cache_field(r);
    cr_assert(got && strcmp(got, want) == 0, "receipt cache '%s', want '%s': %s", got ? got : "(none)", want,
              r->body);
    json_t *at = json_object_get(hx_receipt(r), "fetched_at");
    cr_assert(json_is_string(at) && strlen(json_string_value(at)) == 24, "fetched_at: %s", r->body);
}

typedef struct {
    const pol_broker *b;
    hx_response r;
} flight_arg;

static void *lookup_slow(void *p)
{
    flight_arg *a = p;
    a->r = fl_lookup(a->b, 0, &origin, "/slow?ms=500", NULL, NULL, 0);
    return NULL;
}

Test(fleet_cache, twenty_concurrent_identical_lookups_on_two_instances_fetch_once)
{
    start_fleet(2, CACHED_TENANTS);
    pthread_t th[20];
    flight_arg args[20];
    for (int i = 0; i < 20; i++) {
        args[i] = (flight_arg){ .b = &brokers[i % 2] };
        pthread_create(&th[i], NULL, lookup_slow, &args[i]);
    }
    int hits = 0, misses = 0;
    for (int i = 0; i < 20; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(args[i].r.status, 200, "lookup %d: %ld %s", i, args[i].r.status, args[i].r.body);
        cr_assert_str_eq(status_of(&args[i].r), "success", "%s", args[i].r.body);
        const char *c = fl_cache_field(&args[i].r);
        hits += c && strcmp(c, "hit") == 0;
        misses += c && strcmp(c, "miss") == 0;
        hx_response_free(&args[i].r);
    }
    cr_assert_eq(fl_origin_requests(&origin, "GET /slow?ms=500 "), 1, "the origin was fetched %d times",
                 fl_origin_requests(&origin, "GET /slow?ms=500 "));
    cr_assert_eq(misses, 1);
    cr_assert_eq(hits, 19);
    rp_kill(&redis);
}

Test(fleet_cache, a_hit_is_served_from_the_other_instance_but_never_to_another_tenant)
{
    start_fleet(2, CACHED_TENANTS);
    hx_response first = fl_lookup(&brokers[0], 0, &origin, "/page", NULL, NULL, 0);
    expect_cache(&first, "miss");
    hx_response again = fl_lookup(&brokers[1], 0, &origin, "/page", NULL, NULL, 0);
    expect_cache(&again, "hit");
    cr_assert_str_eq(json_string_value(json_object_get(hx_receipt(&first), "fetched_at")),
                     json_string_value(json_object_get(hx_receipt(&again), "fetched_at")),
                     "a hit reports when the page was fetched");
    cr_assert_eq(fl_origin_requests(&origin, "GET /page "), 1);
    /* Same URL, other tenant: its own fetch. */
    hx_response other = fl_lookup(&brokers[1], 65534, &origin, "/page", NULL, NULL, 0);
    expect_cache(&other, "miss");
    cr_assert_eq(fl_origin_requests(&origin, "GET /page "), 2);
    /* Different output options: a different entry. */
    hx_response opts = fl_lookup(&brokers[0], 0, &origin, "/page", ", \"min_chars\": 10", NULL, 0);
    expect_cache(&opts, "miss");
    /* max_age_s = 0 demands a fresh fetch. */
    hx_response fresh = fl_lookup(&brokers[0], 0, &origin, "/page", ", \"max_age_s\": 0", NULL, 0);
    expect_cache(&fresh, "bypass");
    cr_assert_eq(fl_origin_requests(&origin, "GET /page "), 4);
    hx_response_free(&first);
    hx_response_free(&again);
    hx_response_free(&other);
    hx_response_free(&opts);
    hx_response_free(&fresh);
    rp_kill(&redis);
}

Test(fleet_cache, cache_control_and_errors_are_honoured)
{
    start_fleet(1, CACHED_TENANTS);
    for (int i = 0; i < 2; i++) {
        hx_response r = fl_lookup(&brokers[0], 0, &origin, "/cc?v=no-store", NULL, NULL, 0);
        expect_cache(&r, "miss");
        hx_response_free(&r);
        r = fl_lookup(&brokers[0], 0, &origin, "/cc?v=private,%20max-age=60", NULL, NULL, 0);
        expect_cache(&r, "miss");
        hx_response_free(&r);
        r = fl_lookup(&brokers[0], 0, &origin, "/500", NULL, NULL, 0);
        cr_assert_str_eq(status_of(&r), "error");
        hx_response_free(&r);
    }
    cr_assert_eq(fl_origin_requests(&origin, "GET /cc?v=no-store "), 2, "no-store was cached");
    cr_assert_eq(fl_origin_requests(&origin, "GET /cc?v=private"), 2, "private was cached");
    cr_assert_eq(fl_origin_requests(&origin, "GET /500 "), 2, "an error was cached");

    hx_response r = fl_lookup(&brokers[0], 0, &origin, "/cc?v=max-age=1", NULL, NULL, 0);
    expect_cache(&r, "miss");
    hx_response_free(&r);
    r = fl_lookup(&brokers[0], 0, &origin, "/cc?v=max-age=1", NULL, NULL, 0);
    expect_cache(&r, "hit");
    hx_response_free(&r);
    pol_sleep_ms(1300);
    r = fl_lookup(&brokers[0], 0, &origin, "/cc?v=max-age=1", NULL, NULL, 0);
    expect_cache(&r, "miss");
    hx_response_free(&r);
    cr_assert_eq(fl_origin_requests(&origin, "GET /cc?v=max-age=1 "), 2, "max-age=1 outlived its second");
    rp_kill(&redis);
}

Test(fleet_cache, private_hosts_are_never_cached)
{
    start_fleet(1, "{ name = \"p\"; uids = [ 0 ]; cache = { max_ttl_s = 60; private_hosts = [ \"127.0.0.1\" ]; }; "
                   POL_EGRESS_LOOPBACK " }");
    for (int i = 0; i < 2; i++) {
        hx_response r = fl_lookup(&brokers[0], 0, &origin, "/page", NULL, NULL, 0);
        expect_cache(&r, "bypass");
        hx_response_free(&r);
    }
    cr_assert_eq(fl_origin_requests(&origin, "GET /page "), 2);
    char *dump = rp_dump(&redis);
    cr_assert(!strstr(dump, "Leaky") && !strstr(dump, "verifetch origin"), "a private page reached redis: %s", dump);
    free(dump);
    rp_kill(&redis);
}

Test(fleet_cache, the_store_holds_no_url_in_key_names_and_no_unredacted_text)
{
    start_fleet(1, CACHED_TENANTS);
    hx_response r = fl_lookup(&brokers[0], 0, &origin, "/secret-page", NULL, NULL, 0);
    expect_cache(&r, "miss");
    hx_response_free(&r);
    r = fl_lookup(&brokers[0], 0, &origin, "/secret-page", NULL, NULL, 0);
    expect_cache(&r, "hit");
    cr_assert(!strstr(r.body, "AKIAIOSFODNN7EXAMPLE"), "a hit carries the unredacted key: %s", r.body);
    hx_response_free(&r);
    char *dump = rp_dump(&redis);
    cr_assert(strstr(dump, "vftest:l:"), "no cache entry in redis: %s", dump);
    cr_assert(!strstr(dump, "AKIAIOSFODNN7EXAMPLE"), "unredacted text in redis: %s", dump);
    char *keys = rp_keys(&redis);
    for (char *line = strtok(keys, "\n"); line; line = strtok(NULL, "\n"))
        cr_assert(!strstr(line, "secret") && !strstr(line, "127.0.0.1") && !strchr(line, '/'),
                  "key name carries a URL: %s", line);
    free(keys);
    free(dump);
    rp_kill(&redis);
}
