/* E2E: http_api providers over https. The broker carries the worker's plain
 * HTTP request over its own verified TLS connection (the harness's test CA is
 * the configured bundle) and injects the key; a provider whose certificate
 * comes from another CA never sees a request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "provider_env.h"

TestSuite(provider_tls, .init = pe_setup, .fini = pe_teardown, .timeout = 30);

#define TARGET_URL "https://example.test/docs/page"

static hx_broker broker;

static void start_broker(const char *providers)
{
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    o.providers = providers;
    hx_broker_start(&broker, &o);
}

static hx_receipt_expect expect_one(bool ok, const char *outcome, int status, const char *detail)
{
    hx_receipt_expect e = {
        .ok = ok, .url = TARGET_URL, .max_attempts = -1, .ceiling = 4,
        .providers_available = 1, .n_attempts = 1,
        .failure_reason = ok ? NULL : "all_providers_failed",
        .attempts = { { .provider = "tlsapi", .outcome = outcome, .http_status = status,
                        .detail = detail } },
    };
    return e;
}

/* https echo endpoint, key as header or query; the answer is the echo page. */
static void run_tls_echo(const char *credential, unsigned origin_flags, const char *expect_fmt)
{
    pe_origin echo;
    pe_origin_start(&echo, hx_default_ca(), origin_flags);
    char canary[96], key_path[PATH_MAX];
    pe_canary_make(canary, sizeof canary);
    pe_key_file("tls.key", canary, key_path, sizeof key_path);
    char *providers = NULL;
    cr_assert(asprintf(&providers,
                       "{ name = \"tlsapi\"; kind = \"http_api\";\n"
                       "  endpoint = \"https://127.0.0.1:%d/echo?url={url}\";\n"
                       "  credential = { %s key_file = \"%s\"; }; }",
                       echo.port, credential, key_path) > 0);
    start_broker(providers);

    hx_response r = pe_lookup(&broker, TARGET_URL, NULL);
    hx_receipt_expect e = expect_one(true, "ok", 200, "usable content");
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(strstr(text, "ECHO-NONCE "), "the page is not the echo answer: %s", text);

    char expect[192];
    snprintf(expect, sizeof expect, expect_fmt, canary);
    char *log = pe_origin_log(&echo);
    cr_assert(strstr(log, expect), "the provider never received the key ('%s'); it got:\n%s",
              expect + 1, log);
    pe_forms forms;
    pe_forms_build(canary, &forms);
    const char *form = pe_forms_find(&forms, r.body, r.body_len);
    cr_assert_null(form, "ToolResult carries the key (%s): %s", form, r.body);
    form = pe_forms_find(&forms, text, strlen(text));
    cr_assert_null(form, "page text carries the key (%s): %s", form, text);
    pe_forms_free(&forms);
    free(log);
    free(text);
    hx_response_free(&r);
    free(providers);
}

Test(provider_tls, query_credential_over_tls_is_injected)
{
    run_tls_echo("query = \"api_key\";", 0, "\nQRY api_key=%s\n");
}

/* Many servers end a Content-Length framed answer with a bare TCP close, no
 * TLS close_notify; the broker's own comment (tls_upstream.c) says that is the
 * end of the body and the worker's parser checks the framing. */
Test(provider_tls, provider_closing_without_close_notify_is_ok)
{
    run_tls_echo("header = \"X-Api-Key\";", PE_NO_CLOSE_NOTIFY, "\nHDR X-Api-Key: %s\n");
}

Test(provider_tls, certificate_from_unknown_ca_is_transport_error)
{
    hx_ca rogue;
    hx_ca_generate("rogue-ca", &rogue);
    hx_origin origin;
    hx_origin_start(&origin, NULL, &rogue);
    char endpoint[128], key_path[PATH_MAX];
    hx_origin_url(&origin, true, "/page", endpoint, sizeof endpoint);
    pe_random_key_file("tlsapi.key", key_path, sizeof key_path);
    char *providers = NULL;
    cr_assert(asprintf(&providers,
                       "{ name = \"tlsapi\"; kind = \"http_api\"; endpoint = \"%s?url={url}\";\n"
                       "  credential = { header = \"Authorization\"; format = \"Bearer {key}\";"
                       " key_file = \"%s\"; }; }",
                       endpoint, key_path) > 0);
    start_broker(providers);

    hx_response r = pe_lookup(&broker, TARGET_URL, NULL);
    hx_receipt_expect e = expect_one(false, "transport_error", HX_NULL, NULL);
    e.attempts[0].detail_all[0] = "tls";
    e.attempts[0].detail_all[1] = "certificate";
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(!strstr(text, "verifetch origin article"), "page text despite a TLS failure: %s", text);

    /* The handshake failed, so no request (and no key) was ever sent. */
    cr_assert_gt(hx_origin_connections(&origin), 0, "the broker never tried the provider");
    char *log = hx_read_file(origin.log_path, NULL);
    cr_assert(!log || !strstr(log, "REQ "), "a request reached an unverified provider:\n%s", log);
    free(log);
    free(text);
    hx_response_free(&r);
    free(providers);
}
