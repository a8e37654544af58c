/* E2E: the broker against workers that misbehave on purpose (the test-hook
 * worker, worker.test_hook). Every lookup must come back as a well-formed
 * ToolResult whose attempt says precisely what the worker did, the broker must
 * stay up, and a batch of such lookups must leave its descriptor and process
 * counts exactly where they were. */
#include <signal.h>

#include "hostile.h"
#include "test_common.h"

TestSuite(hostile_workers, .init = hx_setup, .fini = hx_teardown, .timeout = 60);

#define BATCH 20
#define BATCH_THREADS 5

typedef struct {
    const char *hook;
    unsigned timeout_ms;        /* tenant timeout; 0 = harness default */
    unsigned threads;           /* batch concurrency; 0 = BATCH_THREADS */
    size_t batch;               /* lookups in the leak batch; 0 = BATCH */
    bool ok;                    /* the worker still delivered a good result */
    const char *detail_all[4];  /* words the attempt's detail must all contain */
} hook_case;

static tc_env t;
static const hook_case *current;

static void use_hook(hx_broker_opts *o)
{
    o->worker = "worker/verifetch-worker-testhooks";
    o->test_hook = current->hook;
    o->exec_workers = true;   /* descendant counts below must not include a zygote pool */
    if (current->timeout_ms)
        o->timeout_ms = current->timeout_ms;
}

static hx_receipt_expect expectation(const hook_case *hc, const char *url)
{
    hx_receipt_expect e = hc->ok ? tc_expect_one(true, url, "ok", 200, "usable content")
                                 : tc_expect_one(false, url, "transport_error", HX_NULL, NULL);
    for (size_t k = 0; k < 4; k++)
        e.attempts[0].detail_all[k] = hc->detail_all[k];
    return e;
}

/* One answer, judged whole: shape, receipt, detail words, text, time. */
static void check_answer(const hook_case *hc, hx_response *r, const char *url, double limit_ms)
{
    cr_assert_eq(r->curl_code, 0, "hook %s: request failed (curl %d)\nbroker: %s", hc->hook, r->curl_code,
                 hx_broker_log(&t.broker));
    hx_receipt_expect e = expectation(hc, url);
    char *text = hx_check_tool_result(r, &e);
    if (hc->ok)
        cr_assert(strstr(text, "verifetch origin article"), "hook %s: text %s", hc->hook, text);
    else
        cr_assert(strncmp(text, "LOOKUP FAILED:", 14) == 0 && !strstr(text, "verifetch origin article"),
                  "hook %s: failure text %s", hc->hook, text);
    free(text);
    cr_assert_lt(r->elapsed_ms, limit_ms, "hook %s: answer after %.0f ms", hc->hook, r->elapsed_ms);
}

static char *lookup_body(size_t i, void *arg)
{
    (void)i;
    char *body = NULL;
    if (asprintf(&body, "{\"url\": \"%s\"}", (const char *)arg) < 0)
        return NULL;
    return body;
}

static void run_case(const hook_case *hc)
{
    current = hc;
    tc_start(&t, use_hook);
    char url[512];
    snprintf(url, sizeof url, "%s", tc_url(&t, "/page"));
    double limit = t.opts.timeout_ms + 3000.0;
    pid_t broker = t.broker.pid;

    hx_response first = tc_lookup(&t, url, NULL);
    check_answer(hc, &first, url, limit);
    hx_response_free(&first);
    tc_assert_healthy(&t.broker);

    hh_usage before = hh_usage_steady(broker, 5000);
    cr_assert_gt(before.fds, 2, "cannot count verifetchd's descriptors in /proc/%d/fd", (int)broker);
    static hh_reply replies[BATCH];
    size_t n = hc->batch ? hc->batch : BATCH;
    hh_lookups(t.broker.socket_path, n, hc->threads ? hc->threads : BATCH_THREADS, lookup_body, url, 30000,
               replies);
    for (size_t i = 0; i < n; i++) {
        hx_response r = hh_as_response(&replies[i]);
        check_answer(hc, &r, url, limit);
        hx_response_free(&r);
    }
    cr_assert_eq(kill(broker, 0), 0, "verifetchd died during the batch\nstderr: %s", hx_broker_log(&t.broker));
    hh_usage after = hh_usage_settle(broker, before, 5000);
    cr_assert_eq(after.fds, before.fds, "hook %s: broker fds %ld before %zu lookups, %ld after", hc->hook,
                 before.fds, n, after.fds);
    cr_assert_eq(after.procs, before.procs, "hook %s: broker descendants %zu before %zu lookups, %zu after",
                 hc->hook, before.procs, n, after.procs);
    tc_assert_healthy(&t.broker);
    pid_t keep[] = { t.origin.pid };
    hx_broker_stop_checked(&t.broker, keep, 1);
}

Test(hostile_workers, garbage_msgpack_is_a_malformed_result)
{
    static const hook_case c = { .hook = "garbage_result", .detail_all = { "malformed", "bad_msgpack" } };
    run_case(&c);
}

Test(hostile_workers, oversized_frame_is_refused_unread)
{
    static const hook_case c = { .hook = "oversized_frame", .detail_all = { "malformed", "too_large" } };
    run_case(&c);
}

Test(hostile_workers, trailing_bytes_after_the_result_are_refused)
{
    static const hook_case c = { .hook = "trailing_bytes", .detail_all = { "malformed", "trailing" } };
    run_case(&c);
}

/* 300 ms timeout: the broker kills the worker at timeout + its grace. */
Test(hostile_workers, hanging_worker_is_killed_at_the_deadline)
{
    static const hook_case c = {
        .hook = "hang", .timeout_ms = 300,
        .detail_all = { "no result before the deadline", "did not finish in time", "killed" } };
    run_case(&c);
}

Test(hostile_workers, segfault_is_reported_as_sigsegv)
{
    static const hook_case c = { .hook = "crash", .detail_all = { "without a result", "SIGSEGV" } };
    run_case(&c);
}

/* The worker allocates until RLIMIT_AS refuses, then exits 3; each one
 * touches ~0.5 GiB, so only two run at a time. ASan builds have no RLIMIT_AS
 * (the hook stops at 1 GiB instead, slowly): fewer, with more time. */
Test(hostile_workers, memory_bomb_ends_at_the_address_space_limit, .timeout = 90)
{
#ifdef HH_UNDER_ASAN
    static const hook_case c = { .hook = "alloc_bomb", .timeout_ms = 20000, .threads = 2, .batch = 4,
                                 .detail_all = { "without a result", "exited with status 3" } };
#else
    /* A generous deadline: on a busy host touching 0.5 GiB can take seconds,
     * and this test is about how the bomb ends, not how fast. */
    static const hook_case c = { .hook = "alloc_bomb", .timeout_ms = 20000, .threads = 2, .batch = 6,
                                 .detail_all = { "without a result", "exited with status 3" } };
#endif
    run_case(&c);
}

Test(hostile_workers, fork_bomb_is_killed_by_seccomp)
{
    static const hook_case c = { .hook = "fork_bomb",
                                 .detail_all = { "without a result", "SIGSYS", "seccomp" } };
    run_case(&c);
}

Test(hostile_workers, socket_after_confinement_is_killed_by_seccomp)
{
    static const hook_case c = { .hook = "socket_after_confine",
                                 .detail_all = { "without a result", "SIGSYS", "seccomp" } };
    run_case(&c);
}

Test(hostile_workers, open_after_confinement_is_killed_by_seccomp)
{
    static const hook_case c = { .hook = "open_after_confine",
                                 .detail_all = { "without a result", "SIGSYS", "seccomp" } };
    run_case(&c);
}

/* A worker that answered and then never exits: the answer stands, the worker
 * is still killed and reaped. */
Test(hostile_workers, result_then_hang_keeps_the_result_and_reaps_the_worker)
{
    static const hook_case c = { .hook = "hang_after_result", .timeout_ms = 1000, .ok = true };
    run_case(&c);
}
