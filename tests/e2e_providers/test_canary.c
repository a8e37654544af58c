/* E2E: a canary key for an http_api provider whose endpoint echoes the whole
 * request head back as the page. The key must reach the provider (proof the
 * broker injected it) and go nowhere else: not into the ToolResult, not into
 * the worker's environment, argv or memory. The worker is the test-hook build
 * with "hang_after_result", so it stays alive, holding everything it received,
 * until the broker kills it at the deadline; meanwhile a helper thread reads
 * its memory. The broker's own memory is the positive control: the same scan
 * must find the key there. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "proc_inspect.h"
#include "proc_scan.h"
#include "provider_env.h"

TestSuite(canary, .init = pe_setup, .fini = pe_teardown, .timeout = 40);

#define HOOK_TIMEOUT_MS 4000u
#define MIN_WORKER_BYTES (1u << 20)
#define TARGET_URL "https://example.test/strands/tools"

typedef struct {
    /* in */
    pid_t broker;
    const char *origin_log;
    const pe_forms *forms;
    const pe_forms *pair_forms; /* HTTP Basic: the forms of "key:" too, else NULL */
    /* out */
    char nonce[40];             /* the echo answer's nonce, "" if none came */
    size_t workers;             /* live worker processes found */
    uint64_t nonce_worker_bytes;   /* memory read from the worker holding the nonce */
    char leak[512];             /* first trace of the key in a worker, "" if none */
    char problem[256];          /* a worker we could not read */
    bool canary_in_broker;
    uint64_t broker_bytes;
} scan_job;

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* The nonce the echo origin put in its answer, once it has answered. */
static bool wait_for_nonce(scan_job *j, unsigned timeout_ms)
{
    double deadline = hx_now_ms() + timeout_ms;
    while (hx_now_ms() < deadline) {
        char *log = hx_read_file(j->origin_log, NULL);
        const char *at = log ? strstr(log, "NONCE ") : NULL;
        bool got = at && sscanf(at, "NONCE %32[0-9a-f]", j->nonce) == 1 && strlen(j->nonce) == 32;
        free(log);
        if (got)
            return true;
        sleep_ms(10);
    }
    j->nonce[0] = '\0';
    return false;
}

static void scan_worker(scan_job *j, pid_t pid)
{
    static const char *const files[] = { "environ", "cmdline" };
    for (size_t f = 0; f < 2; f++) {
        size_t len = 0;
        char *text = pi_read(pid, files[f], &len);
        if (!text) {
            snprintf(j->problem, sizeof j->problem, "cannot read /proc/%d/%s", (int)pid, files[f]);
            continue;
        }
        const char *form = pe_forms_find(j->forms, text, len);
        if (form && !j->leak[0])
            snprintf(j->leak, sizeof j->leak, "worker %d /proc/%s holds the key (%s)", (int)pid,
                     files[f], form);
        free(text);
    }
    ps_needle needles[PS_MAX_NEEDLES];
    const char *names[PS_MAX_NEEDLES];
    size_t n = 0;
    for (const pe_forms *f = j->forms; f; f = f == j->forms ? j->pair_forms : NULL)
        for (size_t i = 0; i < f->n && n + 1 < PS_MAX_NEEDLES; i++, n++) {
            needles[n] = (ps_needle){ f->form[i], f->len[i] };
            names[n] = f->name[i];
        }
    needles[n++] = (ps_needle){ j->nonce, strlen(j->nonce) };
    ps_mem_result m;
    if (ps_scan_memory(pid, needles, n, &m) != 0) {
        snprintf(j->problem, sizeof j->problem, "cannot open /proc/%d/mem or maps", (int)pid);
        return;
    }
    for (size_t i = 0; i + 1 < n; i++)
        if (m.found[i] && !j->leak[0])
            snprintf(j->leak, sizeof j->leak, "worker %d memory holds the key (%s%s) at %#lx in [%s]",
                     (int)pid, names[i], i >= j->forms->n ? " of key:" : "", (unsigned long)m.found_at[i],
                     m.found_map[i]);
    if (m.found[n - 1] && m.bytes_read > j->nonce_worker_bytes)
        j->nonce_worker_bytes = m.bytes_read;
}

static void *scan_main(void *arg)
{
    scan_job *j = arg;
    if (!wait_for_nonce(j, 10000))
        return NULL;
    /* The worker reads the answer, extracts, sends its result and then
     * blocks in the hook; give it that long, far less than the deadline. */
    sleep_ms(300);
    pid_t kids[64];
    size_t n = pi_descendants(j->broker, kids, 64);
    for (size_t i = 0; i < n; i++) {
        if (!pi_is_worker(kids[i]))
            continue;
        j->workers++;
        scan_worker(j, kids[i]);
    }
    ps_needle raw = { j->forms->form[0], j->forms->len[0] };
    ps_mem_result m;
    if (ps_scan_memory(j->broker, &raw, 1, &m) == 0) {
        j->canary_in_broker = m.found[0];
        j->broker_bytes = m.bytes_read;
    }
    return NULL;
}

/* No form of the key in the body, in any string of the re-serialised JSON, or in the text. */
static void assert_no_key(const pe_forms *forms, const hx_response *r, const char *text)
{
    const char *form = pe_forms_find(forms, r->body, r->body_len);
    cr_assert_null(form, "ToolResult body carries the key (%s): %s", form, r->body);
    char *dump = json_dumps(r->json, JSON_COMPACT);
    cr_assert_not_null(dump);
    form = pe_forms_find(forms, dump, strlen(dump));
    free(dump);
    cr_assert_null(form, "ToolResult JSON carries the key (%s)", form);
    form = pe_forms_find(forms, text, strlen(text));
    cr_assert_null(form, "page text carries the key (%s): %s", form, text);
}

typedef enum { CRED_HEADER, CRED_QUERY, CRED_BASIC } cred_kind;

typedef struct {
    cred_kind cred;
    bool tls;
    const char *path;       /* the echo route */
    const char *response;   /* extra provider member, or "" */
} canary_case;

static void run_canary(const canary_case *c)
{
    pe_origin echo;
    pe_origin_start(&echo, c->tls ? hx_default_ca() : NULL, 0);
    char canary[96], key_path[PATH_MAX];
    pe_canary_make(canary, sizeof canary);
    pe_key_file("canary.key", canary, key_path, sizeof key_path);
    pe_forms forms, pair_forms;
    pe_forms_build(canary, &forms);
    char pair[128];
    snprintf(pair, sizeof pair, "%s:", canary);
    pe_forms_build(pair, &pair_forms);
    static const char *const cred_member[] = {
        [CRED_HEADER] = "header = \"Authorization\"; format = \"Bearer {key}\";",
        [CRED_QUERY] = "query = \"api_key\";",
        [CRED_BASIC] = "basic = \"{key}:\";",
    };

    char *providers = NULL;
    cr_assert(asprintf(&providers,
                       "{ name = \"echo\"; kind = \"http_api\";\n"
                       "  endpoint = \"%s://127.0.0.1:%d%s?url={url}\";\n"
                       "  credential = { %s key_file = \"%s\"; }; %s }",
                       c->tls ? "https" : "http", echo.port, c->path, cred_member[c->cred],
                       key_path, c->response) > 0);
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    o.worker = "worker/verifetch-worker-testhooks";
    o.test_hook = "hang_after_result";
    o.exec_workers = true;    /* hang_after_result keeps an exec'd worker alive to scan */
    o.timeout_ms = HOOK_TIMEOUT_MS;
    o.providers = providers;
    hx_broker b;
    hx_broker_start(&b, &o);

    scan_job job = { .broker = b.pid, .origin_log = echo.log_path, .forms = &forms,
                     .pair_forms = c->cred == CRED_BASIC ? &pair_forms : NULL };
    pthread_t scanner;
    cr_assert_eq(pthread_create(&scanner, NULL, scan_main, &job), 0);
    hx_response r = pe_lookup(&b, TARGET_URL, NULL);
    pthread_join(scanner, NULL);
    if (getenv("VERIFETCH_E2E_TRACE"))
        fprintf(stderr, "canary scan: %zu worker(s), %llu bytes of the fetching worker, "
                "%llu bytes of verifetchd, leak '%s', problem '%s'\n", job.workers,
                (unsigned long long)job.nonce_worker_bytes, (unsigned long long)job.broker_bytes,
                job.leak, job.problem);

    /* The lookup itself: one attempt, the echo page. */
    hx_receipt_expect e = {
        .ok = true, .url = TARGET_URL, .max_attempts = -1, .ceiling = 4,
        .providers_available = 1, .n_attempts = 1,
        .attempts = { { .provider = "echo", .outcome = "ok", .http_status = 200,
                        .detail = "usable content" } },
    };
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(job.nonce[0], "the echo origin never answered\nbroker stderr: %s", hx_broker_log(&b));
    char marker[64];
    snprintf(marker, sizeof marker, "ECHO-NONCE %s", job.nonce);
    cr_assert(strstr(text, marker), "the page is not the echo answer: %s", text);
    /* The credential's own line was echoed into the page: the mask had work to do. */
    const char *cred_line = c->cred == CRED_QUERY ? "api_key=" : "Authorization:";
    cr_assert(strstr(text, cred_line), "echo lacks '%s': %s", cred_line, text);
    assert_no_key(&forms, &r, text);
    assert_no_key(&pair_forms, &r, text);

    /* The provider did get the key: the broker injected it. */
    char expect[160];
    if (c->cred == CRED_BASIC) {
        char *line = pe_basic_header(canary);
        snprintf(expect, sizeof expect, "\n%s", line);
        free(line);
    } else {
        snprintf(expect, sizeof expect,
                 c->cred == CRED_HEADER ? "\nHDR Authorization: Bearer %s\n" : "\nQRY api_key=%s\n", canary);
    }
    char *log = pe_origin_log(&echo);
    cr_assert(strstr(log, expect), "the provider never received the key ('%s'); it got:\n%s",
              expect + 1, log);
    cr_assert(strstr(log, "\nQRY url=" TARGET_URL "\n"), "target not passed to the provider:\n%s",
              log);

    /* The worker, alive, holds the echo answer but no trace of the key. */
    cr_assert_gt(job.workers, 0, "no live worker process found under verifetchd %d", (int)b.pid);
    cr_assert_str_empty(job.problem, "%s", job.problem);
    cr_assert_gt(job.nonce_worker_bytes, 0,
                 "no worker memory held the echo answer: the scan missed the worker that fetched");
    cr_assert_geq(job.nonce_worker_bytes, MIN_WORKER_BYTES, "only %llu bytes of worker memory read",
                  (unsigned long long)job.nonce_worker_bytes);
    cr_assert_str_empty(job.leak, "%s", job.leak);
    /* Positive control: the same scan finds the key where it must be. */
    cr_assert(job.canary_in_broker, "the key was not found in verifetchd's memory (%llu bytes read): "
              "the scan cannot be trusted", (unsigned long long)job.broker_bytes);

    free(log);
    free(text);
    hx_response_free(&r);
    free(providers);
    pe_forms_free(&forms);
    pe_forms_free(&pair_forms);
}

Test(canary, header_credential_reaches_provider_only)
{
    run_canary(&(canary_case){ CRED_HEADER, false, "/echo", "" });
}

/* HTTP Basic (Zyte): the proxy builds "Basic base64(key:)"; the echo quotes it. */
Test(canary, basic_credential_reaches_provider_only)
{
    run_canary(&(canary_case){ CRED_BASIC, false, "/echo", "" });
}

/* The echo as the base64 of a page inside JSON (Zyte's httpResponseBody):
 * the key and the Basic pair sit in the base64 at whatever offset the text
 * puts them, and the worker decodes it. */
Test(canary, basic_credential_echoed_in_a_base64_page_stays_out_of_worker)
{
    run_canary(&(canary_case){ CRED_BASIC, false, "/echo-base64-json",
                               "response = { mode = \"json\"; pointer = \"/httpResponseBody\"; encoding = \"base64\"; };" });
}

Test(canary, query_credential_reaches_provider_only)
{
    run_canary(&(canary_case){ CRED_QUERY, false, "/echo", "" });
}

/* Same over the broker's own TLS connection to the provider (test CA). */
Test(canary, header_credential_over_tls_reaches_provider_only)
{
    run_canary(&(canary_case){ CRED_HEADER, true, "/echo", "" });
}

/* The echo inside a JSON answer, with "/" escaped as "\/": the worker's JSON
 * decoder turns it back into the raw key. */
Test(canary, key_echoed_in_json_with_escaped_slashes_stays_out_of_worker)
{
    run_canary(&(canary_case){ CRED_HEADER, false, "/echo-json",
                               "response = { mode = \"json\"; pointer = \"/data/content\"; };" });
}

/* A provider answer the credential proxy must refuse before a byte of it
 * reaches the worker, whose decoder would rebuild the raw key. endpoint is
 * the path and query up to where "url={url}" is appended. */
static void refused_before_the_worker(const char *endpoint, const char *detail_a, const char *detail_b)
{
    pe_origin echo;
    pe_origin_start(&echo, NULL, 0);
    char canary[96], key_path[PATH_MAX];
    pe_canary_make(canary, sizeof canary);
    pe_key_file("canary.key", canary, key_path, sizeof key_path);
    pe_forms forms;
    pe_forms_build(canary, &forms);
    char *providers = NULL;
    cr_assert(asprintf(&providers,
                       "{ name = \"echo\"; kind = \"http_api\";\n"
                       "  endpoint = \"http://127.0.0.1:%d%surl={url}\";\n"
                       "  credential = { header = \"Authorization\"; format = \"Bearer {key}\"; "
                       "key_file = \"%s\"; }; }",
                       echo.port, endpoint, key_path) > 0);
    hx_broker_opts o;
    hx_broker_opts_default(&o);
    o.providers = providers;
    hx_broker b;
    hx_broker_start(&b, &o);
    hx_response r = pe_lookup(&b, TARGET_URL, NULL);
    hx_receipt_expect e = {
        .ok = false, .url = TARGET_URL, .max_attempts = -1, .ceiling = 4,
        .providers_available = 1, .n_attempts = 1, .failure_reason = "all_providers_failed",
        .attempts = { { .provider = "echo", .outcome = "transport_error", .http_status = HX_ANY,
                        .detail_all = { detail_a, detail_b } } },
    };
    char *text = hx_check_tool_result(&r, &e);
    assert_no_key(&forms, &r, text);
    /* The provider did get the key, so the refusal is what kept it out. */
    char expect[160];
    snprintf(expect, sizeof expect, "\nHDR Authorization: Bearer %s\n", canary);
    char *log = pe_origin_log(&echo);
    cr_assert(log && strstr(log, expect), "the provider never received the injected key");
    free(log);
    free(text);
    free(providers);
    pe_forms_free(&forms);
    hx_response_free(&r);
}

/* The echo gzip-compressed although the broker asked for identity. */
Test(canary, unrequested_gzip_is_refused_before_the_worker_sees_it)
{
    refused_before_the_worker("/echo-gzip?", "coding", "identity");
}

/* Issue 13 item 8: the proxy reads the head as curl will. Each of these
 * passed the old CRLF-only reader of the first head, and curl then decoded
 * the key for the worker. */
Test(canary, coding_on_an_lf_only_line_is_refused)
{
    refused_before_the_worker("/echo-smuggle?how=lf&", "coding", "identity");
}

Test(canary, coding_after_an_interim_1xx_head_is_refused)
{
    refused_before_the_worker("/echo-smuggle?how=1xx&", "interim 1xx", NULL);
}

Test(canary, chunking_on_an_lf_only_line_is_refused)
{
    refused_before_the_worker("/echo-smuggle?how=chunked&", "coding", "identity");
}
