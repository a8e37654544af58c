/* What one zygote worker costs, for issue 15's per-lookup CPU: a run of
 * lookups of a page (10 KiB unless told) (plain HTTP and HTTPS) through a zygote,
 * the way the broker runs them. The zygote reaps every worker, so its
 * cminflt/cutime/cstime grow by exactly what its workers spent; divided by
 * the lookups, that is the page faults and CPU of one worker (its birth,
 * rehearsal, job and death). A benchmark (meson test --benchmark): it prints
 * figures and asserts only that every lookup succeeded.
 *   VF_COST_HOPS   lookups per case (default 300)
 *   VF_COST_BYTES  the page's size (default 10240)
 *   VF_COST_POOL   the zygote's pool (default 4, the broker's)
 *   VF_COST_PERF   if set, `perf record` the zygote and its workers into this
 *                  file (run one case: --filter worker_cost/http_10k)
 *   VF_COST_EVENT  what perf records (default page-faults, every one)
 *   VF_COST_DWARF  if set, perf unwinds with DWARF (libraries without frame
 *                  pointers), not frame pointers */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/spawn/worker_run.h"
#include "broker/spawn/zygote_client.h"
#include "harness.h"
#include "proc_inspect.h"

#define PAGE_BYTES 10240
#define MAX_PAGE_BYTES (8u << 20)

typedef struct {
    unsigned long minflt, cminflt;
    unsigned long long ticks, cticks;
} zy_counters;

static zy_counters read_counters(pid_t pid)
{
    size_t len;
    char *stat = pi_read(pid, "stat", &len);
    cr_assert_not_null(stat, "read /proc/%d/stat", (int)pid);
    const char *p = strrchr(stat, ')');
    cr_assert_not_null(p);
    zy_counters c;
    unsigned long long ut, st, cut, cst;
    cr_assert_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %lu %lu %*u %*u %llu %llu %llu %llu",
                        &c.minflt, &c.cminflt, &ut, &st, &cut, &cst), 6);
    c.ticks = ut + st;
    c.cticks = cut + cst;
    free(stat);
    return c;
}

/* Paragraphs of plain prose up to len bytes. */
static char *page_body(size_t len)
{
    static const char para[] = "<p>The quick brown fox jumps over the lazy dog near the river bank, "
                               "and the dog does not mind at all because it is a sunny day.</p>\n";
    char *b = malloc(len + 1);
    cr_assert_not_null(b);
    size_t n = 0;
    while (n + sizeof para - 1 <= len) {
        memcpy(b + n, para, sizeof para - 1);
        n += sizeof para - 1;
    }
    memset(b + n, ' ', len - n);
    b[len] = '\0';
    return b;
}

static void one_lookup(const char *resp, size_t resp_len, const test_pki *pki, uint8_t *ca, size_t ca_len)
{
    test_origin o;
    memset(&o, 0, sizeof o);
    o.response = resp;
    o.response_len = resp_len;
    if (pki) {
        o.cert_file = pki->cert_pem;
        o.key_file = pki->key_pem;
    }
    origin_start(&o);
    char url[128];
    snprintf(url, sizeof url, "%s://localhost:%u/", pki ? "https" : "http", o.port);
    vf_job job = basic_job(url);
    job.ca_pem = ca;
    job.ca_pem_len = ca_len;
    job.render = 0;
    job.max_body = MAX_PAGE_BYTES;
    vf_worker_spec spec = { .path = worker_path("verifetch-worker"), .required_layers = VF_LAYER_SECCOMP };
    int s = origin_connect(&o);
    vf_result res;
    char detail[256] = "";
    cr_assert_eq(vf_worker_run(&spec, &job, s, vf_now_ms() + 10000, &res, detail, sizeof detail), 0, "%s", detail);
    cr_assert_null(res.transport_error, "%s: %s", res.transport_error, res.detail);
    cr_assert_gt(res.text_len, 1000);
    vf_result_free(&res);
    close(s);
    origin_stop(&o);
}

static pid_t start_perf(pid_t zygote)
{
    const char *out = getenv("VF_COST_PERF");
    if (!out || !*out)
        return -1;
    char pidarg[16];
    snprintf(pidarg, sizeof pidarg, "%d", (int)zygote);
    pid_t p = fork();
    if (p == 0) {
        const char *ev = getenv("VF_COST_EVENT");
        bool faults = !ev || strcmp(ev, "page-faults") == 0;
        const char *graph = getenv("VF_COST_DWARF") ? "dwarf,16384" : "fp";
        execlp("perf", "perf", "record", "-q", "-e", faults ? "page-faults" : ev, "-c", faults ? "1" : "20000", "-d",
               "--call-graph", graph, "-p", pidarg, "-o", out, (char *)NULL);
        _exit(127);
    }
    usleep(500 * 1000); /* attached */
    return p;
}

static void stop_perf(pid_t p)
{
    if (p <= 0)
        return;
    kill(p, SIGINT);
    waitpid(p, NULL, 0);
}

static void run_case(bool tls)
{
    const char *h = getenv("VF_COST_HOPS"), *pl = getenv("VF_COST_POOL");
    int hops = h ? atoi(h) : 300;
    unsigned pool = pl ? (unsigned)atoi(pl) : VF_ZYGOTE_DEFAULT_POOL;
    const char *by = getenv("VF_COST_BYTES");
    size_t page = by ? strtoul(by, NULL, 10) : PAGE_BYTES;
    cr_assert(page >= 1024 && page <= MAX_PAGE_BYTES, "VF_COST_BYTES %zu is not 1 KiB..8 MiB", page);
    char *body = page_body(page);
    size_t resp_len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/html; charset=utf-8", body,
                               page, &resp_len);
    test_pki pki;
    uint8_t *ca = NULL;
    size_t ca_len = 0;
    if (tls) {
        pki_create(&pki);
        ca = slurp(pki.ca_pem, &ca_len);
    }
    char err[256];
    vf_zygote_options zo = { .worker_path = worker_path("verifetch-worker"), .pool = pool, .ca_pem = ca,
                             .ca_pem_len = ca_len };
    cr_assert_eq(vf_zygote_start(&zo, err, sizeof err), 0, "%s", err);
    vf_zygote_status st;
    vf_zygote_get_status(&st);
    cr_assert_gt(st.pid, 0);
    for (int i = 0; i < 5; i++) /* first use: the zygote's own paths run once */
        one_lookup(resp, resp_len, tls ? &pki : NULL, ca, ca_len);
    usleep(300 * 1000);
    pid_t perf = start_perf(st.pid);
    zy_counters a = read_counters(st.pid);
    for (int i = 0; i < hops; i++)
        one_lookup(resp, resp_len, tls ? &pki : NULL, ca, ca_len);
    usleep(300 * 1000); /* the last worker has been reaped, its successor forked */
    zy_counters b = read_counters(st.pid);
    stop_perf(perf);
    vf_zygote_stop();
    double tick_ms = 1e3 / (double)sysconf(_SC_CLK_TCK);
    printf("%s %zu KiB, %d lookups: per worker %.1f page faults, %.3f ms CPU; zygote per worker %.1f page faults, "
           "%.3f ms CPU\n", tls ? "https" : "http", page >> 10, hops, (double)(b.cminflt - a.cminflt) / hops,
           (double)(b.cticks - a.cticks) * tick_ms / hops, (double)(b.minflt - a.minflt) / hops,
           (double)(b.ticks - a.ticks) * tick_ms / hops);
    fflush(stdout);
    if (tls) {
        pki_destroy(&pki);
        free(ca);
    }
    free(resp);
    free(body);
}

Test(worker_cost, http_10k, .timeout = 600)
{
    run_case(false);
}

Test(worker_cost, https_10k, .timeout = 600)
{
    run_case(true);
}
