/* E2E: the worker pool under faults, through the real broker and real
 * workers (issue 14). The zygote killed (SIGKILL) or frozen (SIGSTOP) while
 * 16 clients run lookups (a SIGSTOP lasts 10 s): every lookup is answered
 * within its deadline, only those running on the old zygote's workers fail,
 * the supervisor's new zygote is up (seen in /v1/health) within 2 s of the
 * fault's end, throughput comes back to 90% of what it was before the
 * fault, and lookups are served by a zygote worker again. The broker out of
 * descriptors when it starts a worker or calls a keyed provider: the
 * attempt says the cause is local and no circuit is charged. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostile.h"
#include "serving_common.h"
#include "test_common.h"

TestSuite(pool_faults, .init = hx_setup, .fini = hx_teardown, .timeout = 120);

static hx_origin origin;
static hx_broker broker;

#define CLIENTS 16
#define SLOTS 8
#define TIMEOUT_MS 8000
#define MAX_LOOKUPS 4000

/* ---- /v1/health's zygote ------------------------------------------------------ */

typedef struct {
    bool up;
    long pid, restarts;
    char source[64];   /* confinement_source: who ran the last worker */
} zygote_view;

static zygote_view zygote_now(void)
{
    zygote_view v = { 0 };
    hx_response r = hx_request(&broker, "GET", "/v1/health", NULL, 0);
    cr_assert_eq(r.status, 200, "health: HTTP %ld", r.status);
    json_t *z = json_object_get(json_object_get(r.json, "pool"), "zygote");
    cr_assert(json_is_object(z), "health has no pool.zygote: %s", r.body);
    v.up = json_is_true(json_object_get(z, "up"));
    v.pid = (long)json_integer_value(json_object_get(z, "pid"));
    v.restarts = (long)json_integer_value(json_object_get(z, "restarts"));
    snprintf(v.source, sizeof v.source, "%s", json_string_value(json_object_get(r.json, "confinement_source")));
    hx_response_free(&r);
    return v;
}

/* Until health shows a zygote up under a pid other than old; ms, or -1. */
static double until_replaced(long old, double within_ms, zygote_view *v)
{
    double t0 = hx_now_ms();
    while (hx_now_ms() - t0 < within_ms) {
        *v = zygote_now();
        if (v->up && v->pid > 0 && v->pid != old)
            return hx_now_ms() - t0;
        usleep(20 * 1000);
    }
    return -1;
}

/* ---- load ------------------------------------------------------------------- */

static char *page_body(size_t i, void *arg)
{
    (void)arg;
    return hh_slow_lookup_body(&origin, 200, i);
}

typedef struct {
    double until_ms;   /* wall clock (hx_now_ms) after which no lookup starts */
    size_t issued;
    hh_reply replies[MAX_LOOKUPS];
} load;

static void *run_load(void *arg)
{
    load *l = arg;
    l->issued = hh_lookups_until(broker.socket_path, MAX_LOOKUPS, CLIENTS, page_body, NULL, TIMEOUT_MS + 10000,
                                 l->until_ms, l->replies);
    return NULL;
}

typedef struct {
    size_t ok, failed, unanswered;
    size_t failed_later;   /* failed though begun well after the fault */
    size_t misdescribed;   /* blamed on the fetch budget */
    double slowest_ms;
} tally;

/* Every reply: an HTTP answer within the lookup's deadline (+ 3 s for a
 * loaded host), a ToolResult that succeeded or says why it failed. Failures
 * are only allowed for lookups already running when the old zygote's
 * workers died (killed_at: the SIGKILL, or the supervisor replacing a
 * stopped zygote). */
static tally count(load *l, const char *what, double killed_at)
{
    tally t = { 0 };
    for (size_t i = 0; i < l->issued; i++) {
        hh_reply *r = &l->replies[i];
        if (r->elapsed_ms > t.slowest_ms)
            t.slowest_ms = r->elapsed_ms;
        if (r->status != 200) {
            if (t.unanswered++ < 3)
                cr_log_error("%s: lookup %zu: HTTP %ld curl %d after %.0f ms: %.200s", what, i, r->status,
                             r->curl_code, r->elapsed_ms, r->body);
            continue;
        }
        if (strstr(r->body, "\"status\":\"success\"")) {
            t.ok++;
            continue;
        }
        t.failed++;
        bool later = r->started_ms > killed_at + 250;
        t.failed_later += later;
        const char *detail = strstr(r->body, "\"detail\":");
        /* The fault, not the fetch budget (8 s, far off), ended them. */
        t.misdescribed += detail && strstr(detail, "fetch budget ran out") != NULL;
        cr_log_info("%s: lookup %zu failed, begun %+.0f ms from the workers' death, after %.0f ms: %.200s", what,
                    i, r->started_ms - killed_at, r->elapsed_ms, detail ? detail : r->body);
    }
    return t;
}

static void free_load(load *l)
{
    for (size_t i = 0; i < l->issued; i++)
        hh_reply_free(&l->replies[i]);
}

/* Successful lookups finished per second between from and to (hx_now_ms). */
static double rate(const load *l, double from, double to)
{
    size_t n = 0;
    for (size_t i = 0; i < l->issued; i++) {
        const hh_reply *r = &l->replies[i];
        double done = r->started_ms + r->elapsed_ms;
        n += done >= from && done < to && r->status == 200 && strstr(r->body, "\"status\":\"success\"");
    }
    return (double)n / ((to - from) / 1000.0);
}

/* One run's schedule (issue 14's targets): the load starts, warms up, runs
 * BEFORE_WINDOWS windows at full health, then the fault; the pool must be
 * back within BACK_WITHIN_MS of the fault's end, and in one of
 * AFTER_WINDOWS windows of the same length after that the throughput must
 * be RECOVERED of its mean before. Several windows because this host is
 * shared: a neighbour's burst may slow one of them, or speed up the time
 * before; a pool that did not recover (exec'd workers only, no zygote)
 * is slow in all of them (measured 0.67-0.70). */
#define WARMUP_MS 1000
#define WINDOW_MS 3000
#define BEFORE_WINDOWS 2
#define AFTER_WINDOWS 3
#define SETTLE_MS 500
#ifdef HH_UNDER_ASAN
/* Sanitized workers make every lookup CPU-bound, so the host's load sets
 * the pace of each window more than the pool does (0.89 seen in a run
 * that recovered); a collapse to exec'd workers is still caught below by
 * the last worker's origin. A sanitized zygote takes longer to start. */
#define RECOVERED 0.75
#define BACK_WITHIN_MS 6000
#else
#define RECOVERED 0.9
#define BACK_WITHIN_MS 2000
#endif

typedef struct {
    double t0, fault_at, fault_end, after_at;
} schedule;

static schedule plan(unsigned stop_ms)
{
    schedule s = { .t0 = hx_now_ms() };
    s.fault_at = s.t0 + WARMUP_MS + BEFORE_WINDOWS * WINDOW_MS;
    s.fault_end = s.fault_at + stop_ms;
    s.after_at = s.fault_end + BACK_WITHIN_MS + SETTLE_MS;
    return s;
}

static void sleep_until(double at)
{
    double left = at - hx_now_ms();
    if (left > 0)
        usleep((useconds_t)(left * 1000));
}

/* The fault, then: answers for all, the zygote back, throughput back, a
 * zygote worker again. stop_ms: how long a SIGSTOP lasts (0 for SIGKILL). */
static void fault_under_load(int sig, unsigned stop_ms)
{
    const char *name = sig == SIGKILL ? "SIGKILL" : "SIGSTOP";
    sv_start(&origin, &broker, SLOTS, TIMEOUT_MS);
    zygote_view before = zygote_now();
    cr_assert(before.up && before.pid > 0, "no zygote at start");
    static load l;
    memset(&l, 0, sizeof l);
    schedule s = plan(stop_ms);
    l.until_ms = s.after_at + AFTER_WINDOWS * WINDOW_MS;
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, run_load, &l), 0);
    sleep_until(s.fault_at);
    cr_assert_eq(kill((pid_t)before.pid, sig), 0);
    s.fault_at = s.fault_end = hx_now_ms();
    zygote_view after;
    double back_ms = until_replaced(before.pid, stop_ms + BACK_WITHIN_MS + 3000.0, &after);  /* a stopped one too */
    double back_at = hx_now_ms();
    if (stop_ms) {
        sleep_until(s.fault_at + stop_ms);
        kill((pid_t)before.pid, SIGCONT);   /* if the supervisor has not killed it already */
        s.fault_end = hx_now_ms();
    }
    pthread_join(t, NULL);
    double w0 = rate(&l, s.fault_at - BEFORE_WINDOWS * WINDOW_MS, s.fault_at), best = 0;
    char afters[AFTER_WINDOWS * 16] = "";
    for (int i = 0; i < AFTER_WINDOWS; i++) {
        double from = s.after_at + i * WINDOW_MS, w = rate(&l, from, from + WINDOW_MS);
        best = w > best ? w : best;
        snprintf(afters + strlen(afters), sizeof afters - strlen(afters), "%s%.1f", i ? ", " : "", w);
    }
    tally all = count(&l, name, sig == SIGKILL ? s.fault_at : back_at);
    cr_log_info("%s zygote %ld under %d clients: %zu lookups, %zu ok, %zu failed, %zu unanswered, slowest %.0f ms; "
                "replaced by pid %ld (restarts %ld) %.0f ms after the fault began (%.0f ms after it ended); "
                "ok/s in %d ms windows: %.1f before (mean), %s after (best %.2f of before)",
                name, before.pid, CLIENTS, l.issued, all.ok, all.failed, all.unanswered, all.slowest_ms, after.pid,
                after.restarts, back_ms, back_at - s.fault_end, WINDOW_MS, w0, afters, w0 > 0 ? best / w0 : 0);
    free_load(&l);
    cr_assert_eq(all.unanswered, 0, "%zu lookups got no HTTP answer", all.unanswered);
    cr_assert_leq(all.slowest_ms, TIMEOUT_MS + 3000.0, "a lookup took %.0f ms (deadline %d ms)", all.slowest_ms,
                  TIMEOUT_MS);
    cr_assert_leq(all.failed, SLOTS, "%zu lookups failed: more than were in flight on the zygote's workers",
                  all.failed);
    cr_assert_eq(all.misdescribed, 0, "%zu lookups ended by the fault blame the fetch budget", all.misdescribed);
    cr_assert_eq(all.failed_later, 0, "%zu lookups begun after the old zygote's workers died failed",
                 all.failed_later);
    cr_assert_geq(back_ms, 0, "the zygote was not replaced: %s", hx_broker_log(&broker));
    cr_assert_leq(back_at - s.fault_end, BACK_WITHIN_MS, "the pool was back %.0f ms after the fault ended",
                  back_at - s.fault_end);
    cr_assert_geq(after.restarts, 1);
    cr_assert_gt(w0, 0, "no lookup succeeded before the fault");
    cr_assert_geq(best, RECOVERED * w0, "%s: %.1f ok/s before the fault, at best %.1f after it (%.2f): %s", name, w0,
                  best, best / w0, afters);
    /* Lookups are served by a zygote worker again. */
    char url[256];
    hx_response r = hx_lookup(&broker, "{\"url\": \"%s\"}", hx_origin_url(&origin, false, "/page", url, sizeof url));
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "\"status\":\"success\""), "%s", r.body);
    hx_response_free(&r);
    zygote_view last = zygote_now();
    cr_assert_str_eq(last.source, "last worker (zygote)", "after the restart, workers still come from %s",
                     last.source);
    cr_assert_eq(last.pid, after.pid);
    hx_assert_no_sanitizer_report(&broker);
}

Test(pool_faults, zygote_killed_under_load_is_restarted_and_throughput_recovers)
{
    fault_under_load(SIGKILL, 0);
}

Test(pool_faults, zygote_stopped_10s_under_load_is_replaced_and_throughput_recovers)
{
    fault_under_load(SIGSTOP, 10000);
}

/* ---- the broker out of descriptors at worker spawn ------------------------------ */

static long circuit_state(const char *provider)
{
    hx_response m = hx_request(&broker, "GET", "/metrics", NULL, 0);
    cr_assert_eq(m.status, 200);
    char series[160];
    snprintf(series, sizeof series, "verifetch_circuit_state{tenant=\"serving\",provider=\"%s\"} ", provider);
    const char *at = strstr(m.body, series);
    cr_assert_not_null(at, "no circuit gauge for %s:\n%s", provider, m.body);
    long v = strtol(at + strlen(series), NULL, 10);
    hx_response_free(&m);
    return v;
}

static void set_fd_limit(rlim_t soft)
{
    struct rlimit now;
    cr_assert_eq(prlimit(broker.pid, RLIMIT_NOFILE, NULL, &now), 0);
    now.rlim_cur = soft;
    cr_assert_eq(prlimit(broker.pid, RLIMIT_NOFILE, &now, NULL), 0, "prlimit: %s", strerror(errno));
}

/* The detail of the lookup's one attempt (malloc'd), or NULL on success. */
static char *attempt_detail(const hx_response *r)
{
    cr_assert_eq(r->status, 200, "HTTP %ld: %s", r->status, r->body);
    if (strstr(r->body, "\"status\":\"success\""))
        return NULL;
    json_t *receipt = hx_receipt(r);
    const char *d = json_string_value(json_object_get(json_array_get(json_object_get(receipt, "attempts_log"), 0),
                                                      "detail"));
    return strdup(d ? d : r->body);
}

/* With only k descriptors left to the broker (k = 1..10, its soft
 * RLIMIT_NOFILE lowered live with prlimit), lookups of url fail where the
 * broker runs out: every failure must say it is local. Returns how many
 * failed with step in their detail; *served: how many succeeded. */
static size_t fd_sweep(const char *url, const char *step, size_t *served)
{
    struct rlimit orig;
    cr_assert_eq(prlimit(broker.pid, RLIMIT_NOFILE, NULL, &orig), 0);
    size_t local = 0, at_step = 0;
    *served = 0;
    for (rlim_t k = 1; k <= 10; k++) {
        hh_usage idle = hh_usage_steady(broker.pid, 2000);
        set_fd_limit((rlim_t)idle.fds + k);
        hx_response r = hx_lookup(&broker, "{\"url\": \"%s\"}", url);
        set_fd_limit(orig.rlim_cur);
        char *detail = attempt_detail(&r);
        hx_response_free(&r);
        cr_log_info("%lu fds left: %s", (unsigned long)k, detail ? detail : "served");
        if (!detail) {
            (*served)++;
            continue;
        }
        cr_assert(strncmp(detail, "local: ", 7) == 0, "with %lu fds left, a failure not called local: %s",
                  (unsigned long)k, detail);
        local++;
        at_step += strstr(detail, step) != NULL;
        free(detail);
    }
    cr_assert_gt(at_step, 0, "no lookup failed at \"%s\" (%zu local failures, %zu served)\n%s", step, local,
                 *served, hx_broker_log(&broker));
    cr_assert_gt(*served, 0, "no lookup was served even with 10 fds left");
    return local;
}

#define CIRCUIT_OF_TWO "circuit = { failure_threshold = 2; cooldown_ms = 600000; };"

/* The sweep at worker spawn; then the provider's circuit (2 failures open
 * it) is still closed, the next lookup is served, and two failures that
 * are the origin's (a closed port) do open the circuit. */
static void fd_exhaustion_at_spawn(const char *worker_extra, const char *spawn_step)
{
    static char conf[SV_CONF_MAX];
    hx_origin_start(&origin, NULL, NULL);
    sv_config_body(conf, 4, 5000, worker_extra, CIRCUIT_OF_TWO);
    hh_broker_start(&broker, conf);
    char url[256];
    hx_origin_url(&origin, false, "/page", url, sizeof url);
    size_t served, local = fd_sweep(url, spawn_step, &served);
    cr_assert_eq(circuit_state("direct"), 0, "%zu local failures opened the provider's circuit", local);
    hx_response ok = hx_lookup(&broker, "{\"url\": \"%s\"}", url);
    char *after = attempt_detail(&ok);
    cr_assert_null(after, "with the limit back: %s", after);
    hx_response_free(&ok);
    char closed[128];
    snprintf(closed, sizeof closed, "http://127.0.0.1:%d/", hx_closed_port());
    for (int i = 0; i < 2; i++) {
        hx_response bad = hx_lookup(&broker, "{\"url\": \"%s\"}", closed);
        hx_response_free(&bad);
    }
    cr_assert_eq(circuit_state("direct"), 1, "two origin failures did not open the circuit: this test proves nothing");
    hx_assert_no_sanitizer_report(&broker);
}

Test(pool_faults, fd_exhaustion_taking_a_zygote_worker_is_a_local_cause)
{
    fd_exhaustion_at_spawn("", "cannot take a worker from the zygote");
}

Test(pool_faults, fd_exhaustion_starting_an_exec_worker_is_a_local_cause)
{
    fd_exhaustion_at_spawn("zygote = false;", "(cannot ");   /* create worker channel / start worker */
}

/* A keyed provider (http_api, the origin as its endpoint): the broker out
 * of descriptors for the credential proxy's connection to the provider, or
 * for the worker's channel, is local; the provider's circuit stays closed.
 * Once the provider itself is gone (its port closed), two failures open it. */
Test(pool_faults, fd_exhaustion_calling_a_keyed_provider_is_a_local_cause)
{
    static char conf[SV_CONF_MAX];
    char key_path[PATH_MAX], providers[PATH_MAX + 512];
    hx_origin_start(&origin, NULL, NULL);
    snprintf(key_path, sizeof key_path, "%s/keyed.key", hx_tmpdir());
    FILE *k = fopen(key_path, "w");
    cr_assert_not_null(k);
    fputs("k3y-for-the-fd-test\n", k);
    cr_assert_eq(fclose(k), 0);
    cr_assert_eq(chmod(key_path, 0600), 0);
    snprintf(providers, sizeof providers,
             "providers = ( { name = \"keyed\"; kind = \"http_api\"; "
             "endpoint = \"http://127.0.0.1:%d/page?url={url}\"; "
             "credential = { header = \"X-Api-Key\"; key_file = \"%s\"; }; } ); " CIRCUIT_OF_TWO,
             origin.port, key_path);
    sv_config_body(conf, 4, 5000, "", providers);
    hh_broker_start(&broker, conf);
    char url[256];
    hx_origin_url(&origin, false, "/target", url, sizeof url);
    size_t served, local = fd_sweep(url, "not tried", &served);   /* the proxy's connect to the provider */
    cr_assert_eq(circuit_state("keyed"), 0, "%zu local failures opened the keyed provider's circuit", local);
    kill(origin.pid, SIGKILL);
    waitpid(origin.pid, NULL, 0);
    for (int i = 0; i < 2; i++) {
        hx_response bad = hx_lookup(&broker, "{\"url\": \"%s\"}", url);
        char *detail = attempt_detail(&bad);
        cr_assert(detail && strncmp(detail, "local: ", 7) != 0, "the provider's own failure: %s", detail);
        free(detail);
        hx_response_free(&bad);
    }
    cr_assert_eq(circuit_state("keyed"), 1, "two provider failures did not open its circuit: this test proves nothing");
    hx_assert_no_sanitizer_report(&broker);
}
