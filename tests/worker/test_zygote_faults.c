/* The zygote keeps its own bookkeeping (worker table, poll set) in a mapping
 * its workers do not inherit (MADV_DONTFORK, worker/sandbox/zygote.c). Were
 * it shared with each forked worker, the zygote's next write to each of its
 * pages would copy it: 5-6 page faults of the zygote per worker, against 2-3
 * now (its stack). The zygote's minor faults over a run of lookups say which.
 * Its workers' own faults, which it collects as it reaps them, show its heap
 * has no holes left for a worker to write into (worker/sandbox/heap_plug.h). */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "broker/spawn/worker_run.h"
#include "broker/spawn/zygote_client.h"
#include "harness.h"
#include "zygote_pool1.h"
#include "proc_inspect.h"

#define HOPS 40

/* Field 10 of /proc/<pid>/stat, or with reaped true field 11: the faults
 * of the children it has waited for. */
static unsigned long stat_faults(pid_t pid, bool reaped)
{
    size_t len;
    char *stat = pi_read(pid, "stat", &len);
    cr_assert_not_null(stat, "read /proc/%d/stat", (int)pid);
    /* Counted after the parenthesised name (which may hold spaces). */
    const char *p = strrchr(stat, ')');
    cr_assert_not_null(p);
    unsigned long v[2] = { 0, 0 };
    cr_assert_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %lu %lu", &v[0], &v[1]), 2);
    free(stat);
    return v[reaped];
}

static unsigned long minor_faults(pid_t pid)
{
    return stat_faults(pid, false);
}

/* One lookup of body through the pooled zygote; the text it extracts is
 * checked by the caller (and freed here). */
static void hop_with(const char *body, size_t body_len, void (*check)(const vf_result *))
{
    size_t resp_len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/html", body, body_len, &resp_len);
    test_origin o;
    memset(&o, 0, sizeof o);
    o.response = resp;
    o.response_len = resp_len;
    origin_start(&o);
    char url[128];
    snprintf(url, sizeof url, "http://origin.test:%u/", o.port);
    vf_job job = basic_job(url);
    vf_worker_spec spec = { .path = worker_path("verifetch-worker"), .required_layers = VF_LAYER_SECCOMP };
    int s = origin_connect(&o);
    vf_result res;
    char detail[256] = "";
    cr_assert_eq(vf_worker_run(&spec, &job, s, vf_now_ms() + 10000, &res, detail, sizeof detail), 0, "%s", detail);
    cr_assert_null(res.transport_error, "%s", res.detail);
    check(&res);
    vf_result_free(&res);
    close(s);
    origin_stop(&o);
    free(resp);
}

static void small_page_text(const vf_result *res)
{
    cr_assert_str_eq((char *)res->text, "fault count page");
}

static void one_hop(void)
{
    static const char body[] = "<p>fault count page</p>";
    hop_with(body, strlen(body), small_page_text);
}

Test(zygote_faults, the_zygote_copies_none_of_its_bookkeeping_per_worker, .timeout = 120)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("ASan's shadow writes add copy-on-write faults of their own");
#endif
    pid_t zygote = zygote_start_pool1();
    one_hop(); /* first use: the zygote's paths run once */
    usleep(300 * 1000); /* the pool is full again */
    unsigned long before = minor_faults(zygote);
    for (int i = 0; i < HOPS; i++)
        one_hop();
    usleep(300 * 1000); /* each taken worker has been replaced: HOPS forks */
    unsigned long faults = minor_faults(zygote) - before;
    vf_zygote_stop();
    cr_log_info("zygote: %lu page faults for %d workers", faults, HOPS);
    cr_assert_leq(faults, 4ul * HOPS, "the zygote took %lu page faults for %d forked workers", faults, HOPS);
}

/* Measured with this page: 91-97 faults per worker, 123-127 with the holes
 * the zygote's set-up leaves in its heap. */
#define MAX_WORKER_FAULTS 110ul

Test(zygote_faults, a_worker_writes_few_of_the_heap_pages_it_shares, .timeout = 120)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("ASan's allocator and shadow fault pages of their own");
#endif
    pid_t zygote = zygote_start_pool1();
    one_hop();
    usleep(300 * 1000); /* the used worker is reaped */
    unsigned long before = stat_faults(zygote, true);
    for (int i = 0; i < HOPS; i++)
        one_hop();
    usleep(300 * 1000); /* ...and so is the last of these */
    unsigned long per_worker = (stat_faults(zygote, true) - before) / HOPS;
    vf_zygote_stop();
    cr_log_info("%lu page faults per worker", per_worker);
    cr_assert_leq(per_worker, MAX_WORKER_FAULTS, "a worker took %lu page faults", per_worker);
}

/* A 1 MiB page: its body, UTF-8 copy, tree and text live in huge pages
 * (worker/content/page_map.h), one fault per 2 MiB where there were 512.
 * Measured: ~1430 faults per worker before, ~300 with them. */
#define LARGE_PAGE (1u << 20)
#define MAX_LARGE_PAGE_FAULTS 600ul

/* Whether this kernel gives this process a huge page when asked. */
static bool kernel_gives_huge_pages(void)
{
    size_t len = 4u << 20;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return false;
    char *at = (char *)(((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
    bool huge = false;
    if (madvise(at, 2u << 20, MADV_HUGEPAGE) == 0) {
        memset(at, 1, 2u << 20);
        FILE *f = fopen("/proc/self/smaps_rollup", "r");
        char line[256];
        unsigned long kib = 0;
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "AnonHugePages: %lu kB", &kib) == 1)
                break;
        if (f)
            fclose(f);
        huge = kib >= 2048;
    }
    munmap(p, len);
    return huge;
}

static char *large_page(size_t *len)
{
    static const char para[] = "<p>Large page paragraph with enough words to be kept as content.</p>\n";
    size_t n = LARGE_PAGE / (sizeof para - 1);
    char *page = malloc(n * (sizeof para - 1) + 64);
    cr_assert_not_null(page);
    size_t at = (size_t)sprintf(page, "<html><body><article>");
    for (size_t i = 0; i < n; i++, at += sizeof para - 1)
        memcpy(page + at, para, sizeof para - 1);
    at += (size_t)sprintf(page + at, "</article></body></html>");
    *len = at;
    return page;
}

static void large_page_text(const vf_result *res)
{
    cr_assert_gt(res->text_len, LARGE_PAGE / 2, "only %zu bytes of text", (size_t)res->text_len);
    cr_assert(strncmp((char *)res->text, "Large page paragraph", 20) == 0);
}

Test(zygote_faults, a_large_page_worker_faults_in_huge_pages, .timeout = 120)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("ASan's allocator and shadow fault pages of their own");
#endif
    if (!kernel_gives_huge_pages())
        cr_skip_test("this kernel gives no transparent huge pages (THP off or memory fragmented)");
    size_t len;
    char *page = large_page(&len);
    pid_t zygote = zygote_start_pool1();
    hop_with(page, len, large_page_text);
    usleep(300 * 1000);
    unsigned long before = stat_faults(zygote, true);
    enum { LARGE_HOPS = 8 };
    for (int i = 0; i < LARGE_HOPS; i++)
        hop_with(page, len, large_page_text);
    usleep(300 * 1000);
    unsigned long per_worker = (stat_faults(zygote, true) - before) / LARGE_HOPS;
    vf_zygote_stop();
    free(page);
    cr_log_info("%lu page faults per 1 MiB worker", per_worker);
    cr_assert_leq(per_worker, MAX_LARGE_PAGE_FAULTS, "a 1 MiB page's worker took %lu page faults", per_worker);
}
