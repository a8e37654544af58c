/* Shared setup for the e2e test files: one origin, one broker with a single
 * direct provider, and builders for the common single-attempt receipt. */
#ifndef VERIFETCH_E2E_TEST_COMMON_H
#define VERIFETCH_E2E_TEST_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

#define TC_CEILING 4   /* hx_broker_opts_default's attempt_ceiling */

typedef struct {
    hx_origin origin;
    hx_broker broker;
    hx_broker_opts opts;
    char url[512];
} tc_env;

/* Origin (plain HTTP) + broker with default options, optionally tweaked first. */
static inline void tc_start(tc_env *t, void (*tweak)(hx_broker_opts *))
{
    hx_origin_start(&t->origin, NULL, NULL);
    hx_broker_opts_default(&t->opts);
    if (tweak)
        tweak(&t->opts);
    hx_broker_start(&t->broker, &t->opts);
}

static inline const char *tc_url(tc_env *t, const char *path)
{
    return hx_origin_url(&t->origin, false, path, t->url, sizeof t->url);
}

/* One attempt by provider "direct" out of one provider available. */
static inline hx_receipt_expect tc_expect_one(bool ok, const char *url, const char *outcome,
                                              int http_status, const char *detail)
{
    hx_receipt_expect e;
    memset(&e, 0, sizeof e);
    e.ok = ok;
    e.url = url;
    e.max_attempts = -1;
    e.ceiling = TC_CEILING;
    e.providers_available = 1;
    e.failure_reason = ok ? NULL : "all_providers_failed";
    e.n_attempts = 1;
    e.attempts[0].provider = "direct";
    e.attempts[0].outcome = outcome;
    e.attempts[0].http_status = http_status;
    e.attempts[0].detail = detail;
    return e;
}

/* Lookup of url with an optional extra JSON fragment (e.g. ", \"min_chars\": 5"). */
static inline hx_response tc_lookup(tc_env *t, const char *url, const char *extra)
{
    return hx_lookup(&t->broker, "{\"url\": \"%s\"%s}", url, extra ? extra : "");
}

/* Assert GET /v1/health still answers 200 {"status":"ok"}. */
static inline void tc_assert_healthy(const hx_broker *b)
{
    hx_response h = hx_request(b, "GET", "/v1/health", NULL, 0);
    cr_assert_eq(h.status, 200, "health after the lookup: HTTP %ld (curl %d)\nbroker stderr: %s",
                 h.status, h.curl_code, hx_broker_log(b));
    cr_assert_str_eq(json_string_value(json_object_get(h.json, "status")), "ok");
    hx_response_free(&h);
}

#endif
