/* E2E: redaction of what leaves the broker. A page that quotes a key in a
 * query string and a bearer token keeps its ordinary prose ("Authentication:
 * required.") and loses the secrets; a secret in the requested URL is fetched
 * as given but never echoed back in the receipt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "provider_env.h"

TestSuite(redaction, .init = pe_setup, .fini = pe_teardown, .timeout = 30);

#define REDACTED "[REDACTED]"

static pe_origin origin;
static hx_broker broker;

static void start(void)
{
    pe_origin_start(&origin, NULL, 0);
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    hx_broker_start(&broker, &o);   /* one direct provider "direct" */
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + strlen(needle), needle))
        n++;
    return n;
}

static hx_receipt_expect expect_ok(const char *url)
{
    hx_receipt_expect e = {
        .ok = true, .url = url, .max_attempts = -1, .ceiling = 4,
        .providers_available = 1, .n_attempts = 1,
        .attempts = { { .provider = "direct", .outcome = "ok", .http_status = 200,
                        .detail = "usable content" } },
    };
    return e;
}

Test(redaction, page_secrets_redacted_and_prose_kept)
{
    start();
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/leaky", origin.port);
    hx_response r = pe_lookup(&broker, url, NULL);
    hx_receipt_expect e = expect_ok(url);
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "Authentication: required."), "ordinary prose was altered: %s", text);
    cr_assert(strstr(text, "ordinary prose about the deployment"), "prose lost: %s", text);
    cr_assert(!strstr(r.body, "sk_live_abcdef1234567890"), "query key not redacted: %s", text);
    cr_assert(!strstr(r.body, "abcdefghijklmnopqrstuvwxyz123456"), "bearer token not redacted: %s",
              text);
    cr_assert_geq(count(text, REDACTED), 2, "each secret must leave a %s mark: %s", REDACTED, text);
    /* The names stay, so a reader knows what was removed. */
    cr_assert(strstr(text, "?api_key=" REDACTED), "query key not replaced in place: %s", text);
    cr_assert(strstr(text, "Bearer " REDACTED), "bearer token not replaced in place: %s", text);
    free(text);
    hx_response_free(&r);
}

Test(redaction, secret_query_value_in_requested_url_is_redacted)
{
    start();
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/leaky?token=xyz123secret&lang=en", origin.port);
    hx_response r = pe_lookup(&broker, url, NULL);
    hx_receipt_expect e = expect_ok(NULL);
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(!strstr(r.body, "xyz123secret"), "the secret left the broker: %s", r.body);
    const char *rurl = json_string_value(json_object_get(hx_receipt(&r), "url"));
    char prefix[128];
    snprintf(prefix, sizeof prefix, "http://127.0.0.1:%d/leaky?token=", origin.port);
    cr_assert(strncmp(rurl, prefix, strlen(prefix)) == 0, "receipt url: %s", rurl);
    cr_assert(strstr(rurl, "token=" REDACTED) || strstr(rurl, "token=%5BREDACTED%5D"),
              "no redaction mark in the receipt url: %s", rurl);
    cr_assert(strstr(rurl, "lang=en"), "harmless parameter lost: %s", rurl);
    /* Redaction is for output only: the page was fetched with the real value. */
    char *log = pe_origin_log(&origin);
    cr_assert(strstr(log, "\nQRY token=xyz123secret\n"), "the origin got another URL:\n%s", log);
    free(log);
    free(text);
    hx_response_free(&r);
}
