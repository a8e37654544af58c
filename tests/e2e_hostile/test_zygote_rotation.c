/* E2E: periodic zygote re-exec (issue 13 item 9). Workers forked from one
 * zygote share its address-space layout; with worker.zygote_max_workers or
 * worker.zygote_max_age_s the broker execs a fresh zygote and retires the
 * old one. Through the real broker and real workers: the zygote pid changes,
 * the new one's libc and stack sit elsewhere (/proc/PID/maps), every lookup
 * running across the swaps succeeds, and no retired zygote is left. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <unistd.h>

#include "hostile.h"
#include "serving_common.h"
#include "test_common.h"

TestSuite(zygote_rotation, .init = hx_setup, .fini = hx_teardown, .timeout = 100);

static hx_origin origin;
static hx_broker broker;

#define CLIENTS 8
#define MAX_WORKERS 10
#define LOOKUPS 64
#define MAX_SEEN 64

typedef struct {
    long pid;
    unsigned long libc, stack;   /* start of the first libc mapping and of [stack] */
} zygote_seen;

static void start_broker(const char *worker_extra)
{
    static char conf[SV_CONF_MAX];
    hx_origin_start(&origin, NULL, NULL);
    sv_config_body(conf, CLIENTS, 10000, worker_extra, "");
    hh_broker_start(&broker, conf);
}

static json_t *health_zygote(json_t **doc)
{
    hx_response r = hx_request(&broker, "GET", "/v1/health", NULL, 0);
    cr_assert_eq(r.status, 200, "health: HTTP %ld", r.status);
    *doc = json_incref(r.json);
    hx_response_free(&r);
    json_t *z = json_object_get(json_object_get(*doc, "pool"), "zygote");
    cr_assert(json_is_object(z), "health has no pool.zygote");
    return z;
}

static long zygote_field(const char *name)
{
    json_t *doc;
    long v = (long)json_integer_value(json_object_get(health_zygote(&doc), name));
    json_decref(doc);
    return v;
}

/* The layout of a live process; false when it has gone or shows neither. */
static bool layout_of(long pid, zygote_seen *z)
{
    size_t len = 0;
    char *maps = pi_read((pid_t)pid, "maps", &len);
    z->pid = pid;
    z->libc = z->stack = 0;
    for (char *line = maps; line && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        unsigned long from = strtoul(line, NULL, 16);
        if (!z->libc && strstr(line, "/libc.so"))
            z->libc = from;
        if (!z->stack && strstr(line, "[stack]"))
            z->stack = from;
        line = end ? end + 1 : NULL;
    }
    free(maps);
    return z->libc && z->stack;
}

/* Records the serving zygote when it is one not seen yet. */
static void note_zygote(zygote_seen *seen, size_t *n)
{
    long pid = zygote_field("pid");
    if (pid <= 0 || *n == MAX_SEEN || (*n > 0 && seen[*n - 1].pid == pid))
        return;
    for (size_t i = 0; i < *n; i++)
        if (seen[i].pid == pid)
            return;
    if (layout_of(pid, &seen[*n]))
        (*n)++;
}

static char *page_body(size_t i, void *arg)
{
    (void)arg;
    return hh_slow_lookup_body(&origin, 300, i);
}

typedef struct {
    atomic_bool done;
    hh_reply replies[LOOKUPS];
} load;

static void *run_load(void *arg)
{
    load *l = arg;
    hh_lookups(broker.socket_path, LOOKUPS, CLIENTS, page_body, NULL, 30000, l->replies);
    atomic_store(&l->done, true);
    return NULL;
}

/* Zygotes among the broker's children (their workers, forks of them, are
 * grandchildren with the same argv): retired ones must have ended. */
static size_t live_zygotes(pid_t *out, size_t max)
{
    pid_t all[512];
    size_t n = pi_children(broker.pid, all, 512), z = 0;
    for (size_t i = 0; i < n && i < 512; i++)
        if (pi_is_zygote(all[i]) && z < max)
            out[z++] = all[i];
    return z;
}

static void assert_only_the_serving_zygote_left(const zygote_seen *seen, size_t n_seen)
{
    double t0 = hx_now_ms();
    while (zygote_field("draining") > 0 && hx_now_ms() - t0 < 10000)
        usleep(50 * 1000);
    cr_assert_eq(zygote_field("draining"), 0, "retired zygotes still draining after 10 s: %s",
                 hx_broker_log(&broker));
    long serving = zygote_field("pid");
    pid_t live[16];
    size_t n_live = live_zygotes(live, 16);
    cr_assert_eq(n_live, 1, "%zu zygote processes under the broker, want only the serving one", n_live);
    cr_assert_eq((long)live[0], serving);
    for (size_t i = 0; i < n_seen; i++)
        if (seen[i].pid != serving)
            cr_assert(kill((pid_t)seen[i].pid, 0) != 0 && errno == ESRCH, "retired zygote %ld still exists",
                      seen[i].pid);
}

Test(zygote_rotation, fresh_zygote_after_max_workers_with_every_lookup_served)
{
    FILE *aslr = fopen("/proc/sys/kernel/randomize_va_space", "re");
    int randomize = aslr && fscanf(aslr, "%d", &randomize) == 1 ? randomize : -1;
    if (aslr)
        fclose(aslr);
    if (randomize == 0)
        cr_skip_test("ASLR is off on this host (kernel.randomize_va_space = 0): no layout to refresh");
    char extra[96];
    snprintf(extra, sizeof extra, "zygote_max_workers = %d; zygote_max_age_s = 0;", MAX_WORKERS);
    start_broker(extra);
    static zygote_seen seen[MAX_SEEN];
    size_t n_seen = 0;
    note_zygote(seen, &n_seen);
    cr_assert_eq(n_seen, 1, "no zygote at start");

    /* 64 lookups of 300 ms, 8 at a time: the zygote is due for replacement
     * every 10 workers while lookups hold its workers. */
    static load l;
    memset(&l, 0, sizeof l);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, run_load, &l), 0);
    while (!atomic_load(&l.done)) {
        note_zygote(seen, &n_seen);
        usleep(20 * 1000);
    }
    pthread_join(t, NULL);
    note_zygote(seen, &n_seen);

    size_t ok = 0;
    for (size_t i = 0; i < LOOKUPS; i++) {
        hh_reply *r = &l.replies[i];
        bool good = r->status == 200 && strstr(r->body, "\"status\":\"success\"");
        if (!good)
            cr_log_error("lookup %zu: HTTP %ld curl %d after %.0f ms: %.300s", i, r->status, r->curl_code,
                         r->elapsed_ms, r->body);
        ok += good;
        hh_reply_free(r);
    }
    long rotations = zygote_field("rotations");
    cr_log_info("%d lookups, %zu ok; %ld rotations, %zu zygotes seen", LOOKUPS, ok, rotations, n_seen);
    cr_assert_eq(ok, LOOKUPS, "%zu of %d lookups across the zygote swaps failed", LOOKUPS - ok, LOOKUPS);
    /* Enough workers for several swaps, and health counted them. */
    cr_assert_geq(n_seen, 3, "the zygote pid changed only %zu times: %s", n_seen - 1, hx_broker_log(&broker));
    cr_assert_geq(rotations, (long)n_seen - 1);
    cr_assert_eq(zygote_field("restarts"), 0, "a rotation counted as a failure restart");
    for (size_t i = 1; i < n_seen; i++) {
        cr_assert_neq(seen[i].libc, seen[0].libc, "zygote %ld has libc where zygote %ld had it (%#lx)",
                      seen[i].pid, seen[0].pid, seen[0].libc);
        cr_assert_neq(seen[i].stack, seen[0].stack, "zygote %ld has its stack where zygote %ld had it",
                      seen[i].pid, seen[0].pid);
    }
    assert_only_the_serving_zygote_left(seen, n_seen);
    cr_assert_gt(sv_count_in_log(&broker, "retired after"), 0, "no log line names the retirement");
    hx_assert_no_sanitizer_report(&broker);
    pid_t keep[] = { origin.pid };
    hx_broker_stop_checked(&broker, keep, 1);
}

/* Idle too: the layout does not outlive worker.zygote_max_age_s. */
Test(zygote_rotation, fresh_zygote_after_max_age_while_idle)
{
    start_broker("zygote_max_workers = 0; zygote_max_age_s = 1;");
    static zygote_seen seen[MAX_SEEN];
    size_t n_seen = 0;
    note_zygote(seen, &n_seen);
    double t0 = hx_now_ms();
    while (n_seen < 3 && hx_now_ms() - t0 < 15000) {
        note_zygote(seen, &n_seen);
        usleep(50 * 1000);
    }
    cr_assert_geq(n_seen, 3, "after %.0f ms only %zu zygotes: %s", hx_now_ms() - t0, n_seen,
                  hx_broker_log(&broker));
    /* A lookup right after is served by the current zygote's worker. */
    char url[256];
    hx_response r = hx_lookup(&broker, "{\"url\": \"%s\"}", hx_origin_url(&origin, false, "/page", url, sizeof url));
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "\"status\":\"success\""), "%s", r.body);
    hx_response_free(&r);
    /* The first, retired two rotations ago with no worker out, has ended and been reaped. */
    t0 = hx_now_ms();
    while (kill((pid_t)seen[0].pid, 0) == 0 && hx_now_ms() - t0 < 5000)
        usleep(20 * 1000);
    cr_assert(kill((pid_t)seen[0].pid, 0) != 0 && errno == ESRCH, "retired zygote %ld still exists", seen[0].pid);
    hx_assert_no_sanitizer_report(&broker);
    pid_t keep[] = { origin.pid };
    hx_broker_stop_checked(&broker, keep, 1);
}
