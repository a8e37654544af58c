/* Unit tests of the fleet pieces that need no store: Cache-Control rules,
 * URL normalisation and key hashing, the in-process LRU, the request's
 * max_age_s and options key, and the fleet config settings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "broker/api/request.h"
#include "broker/fleet/cache_control.h"
#include "broker/fleet/cache_key.h"
#include "broker/fleet/lookup_lru.h"
#include "policy/config.h"

static unsigned ttl_of(const char *header, unsigned max)
{
    vf_cache_control cc;
    vf_cache_control_parse(header, &cc);
    return vf_cache_control_ttl(&cc, max);
}

Test(cache_control, directives_decide_the_lifetime)
{
    cr_assert_eq(ttl_of(NULL, 300), 300, "no header: the tenant's cap");
    cr_assert_eq(ttl_of("max-age=60", 300), 60);
    cr_assert_eq(ttl_of("max-age=6000", 300), 300, "capped by max_ttl_s");
    cr_assert_eq(ttl_of("public, max-age=60, s-maxage=10", 300), 10, "s-maxage wins for a shared cache");
    cr_assert_eq(ttl_of("MAX-AGE=\"20\"", 300), 20, "case-insensitive, quoted value");
    cr_assert_eq(ttl_of("no-store", 300), 0);
    cr_assert_eq(ttl_of("no-cache", 300), 0);
    cr_assert_eq(ttl_of("private, max-age=60", 300), 0);
    cr_assert_eq(ttl_of("max-age=0", 300), 0);
    cr_assert_eq(ttl_of("max-age=abc", 300), 0, "malformed = not stored");
    cr_assert_eq(ttl_of("max-age", 300), 0);
    cr_assert_eq(ttl_of("max-age=99999999999999999999", 300), 300, "saturates, then capped");
    cr_assert_eq(ttl_of("foo=\"a,no-store\", max-age=30", 300), 30, "commas inside quotes are not separators");
}

Test(cache_key, urls_normalise_and_keys_carry_no_url)
{
    char *n = vf_cache_normalize_url("HTTP://Example.COM:80#frag");
    cr_assert_str_eq(n, "http://example.com/");
    free(n);
    n = vf_cache_normalize_url("https://example.com:8443/a/b?x=1&y=2");
    cr_assert_str_eq(n, "https://example.com:8443/a/b?x=1&y=2");
    free(n);
    char k1[VF_FLEET_KEY_MAX], k2[VF_FLEET_KEY_MAX], k3[VF_FLEET_KEY_MAX], k4[VF_FLEET_KEY_MAX];
    cr_assert_eq(vf_cache_key(k1, "p:", "t1", "http://Example.com/page", "{}"), 0);
    cr_assert_eq(vf_cache_key(k2, "p:", "t1", "http://example.com:80/page#x", "{}"), 0);
    cr_assert_eq(vf_cache_key(k3, "p:", "t2", "http://example.com/page", "{}"), 0);
    cr_assert_eq(vf_cache_key(k4, "p:", "t1", "http://example.com/page", "{\"min_chars\":10}"), 0);
    cr_assert_str_eq(k1, k2, "equivalent URLs share a key");
    cr_assert_str_neq(k1, k3, "tenants never share a key");
    cr_assert_str_neq(k1, k4, "output options are part of the key");
    cr_assert(strncmp(k1, "p:l:", 4) == 0 && strlen(k1) == 4 + 32, "key %s", k1);
    cr_assert(!strstr(k1, "example") && !strstr(k1, "t1"), "key %s names the URL or tenant", k1);
    char host[64];
    cr_assert_eq(vf_cache_url_host("https://WWW.Example.com./x", host, sizeof host), 0);
    cr_assert_str_eq(host, "www.example.com");
}

Test(cache_lru, evicts_least_recent_per_tenant_and_expires)
{
    vf_lru *c = vf_lru_new();
    uint64_t at = 0;
    vf_lru_put(c, "a", 2, "k1", "one", 3, 1000, 5000);
    vf_lru_put(c, "a", 2, "k2", "two", 3, 1000, 5000);
    char *v = vf_lru_get(c, "a", "k1", 1500, UINT64_MAX, &at);   /* k1 now most recent */
    cr_assert_str_eq(v, "one");
    cr_assert_eq(at, 1000);
    free(v);
    vf_lru_put(c, "a", 2, "k3", "three", 5, 1000, 5000);          /* evicts k2 */
    cr_assert_null(vf_lru_get(c, "a", "k2", 1500, UINT64_MAX, &at));
    cr_assert_eq(vf_lru_count(c, "a"), 2);
    cr_assert_null(vf_lru_get(c, "b", "k1", 1500, UINT64_MAX, &at), "another tenant's entry");
    cr_assert_null(vf_lru_get(c, "a", "k1", 1500, 100, &at), "older than max_age");
    cr_assert_null(vf_lru_get(c, "a", "k1", 5000, UINT64_MAX, &at), "expired");
    cr_assert_eq(vf_lru_count(c, "a"), 1, "an expired entry is dropped when seen");
    vf_lru_free(c);
}

Test(cache_request, max_age_and_options_key)
{
    vf_lookup_request a, b;
    vf_request_error err;
    const char *one = "{\"url\":\"http://x.example/\",\"min_chars\":5,\"max_age_s\":30}";
    const char *two = "{\"min_chars\":5,\"url\":\"http://x.example/\"}";
    cr_assert_eq(vf_request_parse(one, strlen(one), &a, &err), 0, "%s", err.message);
    cr_assert_eq(vf_request_parse(two, strlen(two), &b, &err), 0, "%s", err.message);
    cr_assert(a.has_max_age && a.max_age_s == 30);
    cr_assert(!b.has_max_age);
    cr_assert_str_eq(a.options_key, b.options_key, "order and max_age_s do not change the options key");
    cr_assert_str_eq(a.options_key, "{\"min_chars\":5}");
    vf_request_free(&a);
    vf_request_free(&b);
    const char *bad = "{\"url\":\"http://x.example/\",\"max_age_s\":-1}";
    cr_assert_eq(vf_request_parse(bad, strlen(bad), &a, &err), -1);
    cr_assert_str_eq(err.field, "max_age_s");
}

static int load(const char *text, vf_config *cfg, char *err, size_t errlen)
{
    char path[] = "/tmp/vf-fleet-conf-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    int rc = vf_config_load(path, cfg, err, errlen);
    unlink(path);
    return rc;
}

Test(fleet_config, settings_parse_and_errors_name_the_field)
{
    vf_config cfg;
    char err[512];
    cr_assert_eq(load("state = { redis = \"unix:/run/r.sock\"; };\n"
                      "tenants = ( { name = \"a\"; cache = { max_ttl_s = 30; private_hosts = [ \".corp.example\" ]; };"
                      " providers = ( { name = \"d\"; kind = \"direct\"; quota = { requests_per_minute = 5; concurrent = 2; }; } ); } );\n",
                      &cfg, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(cfg.state.unix_path, "/run/r.sock");
    cr_assert_str_eq(cfg.state.key_prefix, "verifetch:");
    cr_assert(cfg.tenants[0].cache.enabled && cfg.tenants[0].cache.max_ttl_s == 30);
    cr_assert(vf_cache_host_private(&cfg.tenants[0].cache, "corp.example"));
    cr_assert(vf_cache_host_private(&cfg.tenants[0].cache, "wiki.corp.example"));
    cr_assert(!vf_cache_host_private(&cfg.tenants[0].cache, "notcorp.example"));
    cr_assert_eq(cfg.tenants[0].providers[0].quota.requests_per_minute, 5);
    cr_assert_eq(cfg.tenants[0].providers[0].quota.concurrent, 2);
    vf_config_free(&cfg);

    cr_assert_eq(load("state = { redis = \"redis://127.0.0.1:6379\"; };\n", &cfg, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(cfg.state.host, "127.0.0.1");
    cr_assert_eq(cfg.state.port, 6379);
    vf_config_free(&cfg);

    static const struct { const char *text, *field; } bad[] = {
        { "state = { redis = \"redis://user:pw@h:1\"; };", "state.redis" },
        { "state = { redis = \"redis://h:0\"; };", "state.redis" },
        { "state = { redis = \"unix:relative\"; };", "state.redis" },
        { "state = { key_prefix = \"x\"; };", "state.redis" },
        { "state = { redis = \"unix:/r\"; password_file = \"/nonexistent/pw\"; };", "state.password_file" },
        { "state = { redis = \"unix:/r\"; key_prefix = \"has space\"; };", "state.key_prefix" },
        { "tenants = ( { name = \"a\"; cache = { max_ttl_s = 0; }; } );", "tenants[0].cache.max_ttl_s" },
        { "tenants = ( { name = \"a\"; cache = { private_hosts = [ \"UPPER.example\" ]; }; } );",
          "tenants[0].cache.private_hosts[0]" },
        { "tenants = ( { name = \"a\"; providers = ( { name = \"d\"; kind = \"direct\"; quota = { rpm = 1; }; } ); } );",
          "tenants[0].providers[0].quota" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(load(bad[i].text, &cfg, err, sizeof err), -1, "accepted: %s", bad[i].text);
        cr_assert(strstr(err, bad[i].field), "error for %s does not name %s: %s", bad[i].text, bad[i].field, err);
    }
}
