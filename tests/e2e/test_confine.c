/* E2E: worker confinement seen from outside. The test-hook worker misbehaves
 * on purpose after confinement; the broker must report exactly how it died,
 * stay healthy, and leave no worker process behind. */
#include <sys/resource.h>

#include "test_common.h"

#include <unistd.h>

#include "proc_inspect.h"

TestSuite(confine, .init = hx_setup, .fini = hx_teardown, .timeout = 30);

static tc_env t;
static const char *hook;
static unsigned hook_timeout_ms;

static void testhook_worker(hx_broker_opts *o)
{
    o->worker = "worker/verifetch-worker-testhooks";
    o->test_hook = hook;
    if (hook_timeout_ms)
        o->timeout_ms = hook_timeout_ms;
}

/* Run one lookup with the hook and check the attempt; detail_any lists
 * alternatives, at least one of which the detail must mention. */
static void run_hook(const char *name, unsigned timeout_ms, const char *const any[4])
{
    hook = name;
    hook_timeout_ms = timeout_ms;
    tc_start(&t, testhook_worker);
    const char *url = tc_url(&t, "/page");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(false, url, "transport_error", HX_ANY, NULL);
    for (size_t i = 0; i < 4; i++)
        e.attempts[0].detail_any[i] = any[i];
    char *text = hx_check_tool_result(&r, &e);
    cr_assert(!strstr(text, "verifetch origin article"), "page text from a dead worker: %s", text);
    free(text);
    double limit = (timeout_ms ? timeout_ms : t.opts.timeout_ms) + 3000.0;
    cr_assert_lt(r.elapsed_ms, limit, "hook %s: answer after %.0f ms", name, r.elapsed_ms);
    hx_response_free(&r);
    tc_assert_healthy(&t.broker);
    pid_t keep[] = { t.origin.pid };
    hx_broker_stop_checked(&t.broker, keep, 1);
}

Test(confine, socket_after_confine_is_killed_by_seccomp)
{
    const char *const any[4] = { "SIGSYS" };
    run_hook("socket_after_confine", 0, any);
}

Test(confine, open_after_confine_is_killed_by_seccomp)
{
    const char *const any[4] = { "SIGSYS" };
    run_hook("open_after_confine", 0, any);
}

Test(confine, crash_is_reported_as_sigsegv)
{
    const char *const any[4] = { "SIGSEGV" };
    run_hook("crash", 0, any);
}

Test(confine, garbage_result_is_malformed)
{
    const char *const any[4] = { "malformed", "invalid" };
    run_hook("garbage_result", 0, any);
}

Test(confine, hanging_worker_is_killed_in_bounded_time)
{
    const char *const any[4] = { "timed out", "timeout", "killed", "SIGKILL" };
    run_hook("hang", 1000, any);
}

/* The production worker never runs a test hook: it either ignores it (ok) or
 * refuses the job outright, but it must not crash as the hook asks. */
static void production_worker_with_hook(hx_broker_opts *o) { o->test_hook = "crash"; }

Test(confine, production_worker_never_runs_test_hook)
{
    tc_start(&t, production_worker_with_hook);
    const char *url = tc_url(&t, "/page");
    hx_response r = tc_lookup(&t, url, NULL);
    json_t *attempt = json_array_get(json_object_get(hx_receipt(&r), "attempts_log"), 0);
    const char *detail = json_string_value(json_object_get(attempt, "detail"));
    bool refused = detail && strstr(detail, "test hooks not built");
    hx_receipt_expect e = refused
        ? tc_expect_one(false, url, "transport_error", HX_NULL, "internal: test hooks not built")
        : tc_expect_one(true, url, "ok", 200, "usable content");
    free(hx_check_tool_result(&r, &e));
    cr_assert(!hx_contains_ci(r.body, "SIGSEGV"), "production worker ran the crash hook: %s",
              r.body);
    hx_response_free(&r);
    pid_t keep[] = { t.origin.pid };
    hx_broker_stop_checked(&t.broker, keep, 1);
}

/* Several lookups in a row: every worker is reaped, none accumulates. */
Test(confine, workers_are_reaped_after_each_lookup)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/page");
    for (int i = 0; i < 5; i++) {
        hx_response r = tc_lookup(&t, url, NULL);
        hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
        free(hx_check_tool_result(&r, &e));
        hx_response_free(&r);
    }
    cr_assert_eq(hx_wait_no_children(t.broker.pid, 3000), 0, "workers left under the broker");
    pid_t keep[] = { t.origin.pid };
    hx_broker_stop_checked(&t.broker, keep, 1);
}

static void big_body(hx_broker_opts *o)
{
    o->max_body_bytes = 100ul << 20;   /* a worker wants 512 MiB + 6 x 100 MiB */
}

/* Issue 14 defect 2: under an inherited RLIMIT_AS hard limit below what a
 * worker wants, every lookup used to fail with "setrlimit(RLIMIT_AS):
 * Operation not permitted" while the start-up probe passed. Now workers are
 * clamped to the hard limit, the broker says so once, and lookups work. */
Test(confine, worker_memory_limit_is_clamped_to_the_inherited_hard_limit)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("ASan builds run without RLIMIT_AS");
#endif
    struct rlimit rl = { .rlim_cur = 1024ull << 20, .rlim_max = 1024ull << 20 };
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);   /* the broker inherits it */
    tc_start(&t, big_body);
    const char *url = tc_url(&t, "/page");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_receipt_expect e = tc_expect_one(true, url, "ok", 200, "usable content");
    free(hx_check_tool_result(&r, &e));
    hx_response_free(&r);
    cr_assert(strstr(hx_broker_log(&t.broker), "RLIMIT_AS hard limit 1024 MiB"), "no clamp line: %s",
              hx_broker_log(&t.broker));
    pid_t keep[] = { t.origin.pid };
    hx_broker_stop_checked(&t.broker, keep, 1);
}

/* Issue 13 item 7: no worker or zygote holds the broker's stderr (under
 * systemd a journal socket a worker could forge lines into): their fd 2
 * is the broker's relay pipe. */
Test(confine, workers_do_not_share_the_broker_stderr)
{
    tc_start(&t, NULL);
    const char *url = tc_url(&t, "/page");
    hx_response r = tc_lookup(&t, url, NULL);
    hx_response_free(&r);
    char path[64], broker_err[256] = "", child_err[256];
    snprintf(path, sizeof path, "/proc/%d/fd/2", (int)t.broker.pid);
    cr_assert_gt(readlink(path, broker_err, sizeof broker_err - 1), 0);
    pid_t kids[64];
    size_t n = pi_descendants(t.broker.pid, kids, 64), checked = 0;
    for (size_t i = 0; i < n && i < 64; i++) {
        snprintf(path, sizeof path, "/proc/%d/fd/2", (int)kids[i]);
        ssize_t len = readlink(path, child_err, sizeof child_err - 1);
        if (len <= 0)
            continue; /* gone, or not ours to read */
        child_err[len] = '\0';
        cr_assert_str_neq(child_err, broker_err, "pid %d has the broker's stderr %s", (int)kids[i], broker_err);
        cr_assert(strncmp(child_err, "pipe:", 5) == 0, "pid %d: fd 2 is %s", (int)kids[i], child_err);
        checked++;
    }
    cr_assert_gt(checked, 0, "no zygote or pool worker under the broker to look at");
    pid_t keep[] = { t.origin.pid };
    hx_broker_stop_checked(&t.broker, keep, 1);
}
