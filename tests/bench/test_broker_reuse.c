/* The broker reuses a 1 MiB page's buffers from one lookup to the next, and
 * still gives the heap back once a burst is over (issue 15). A real
 * verifetchd with its zygote and confined workers looks up the loopback
 * benchmark origin's 1 MiB page, one lookup after another and then 16 at
 * once. Page faults and RSS do not depend on machine load. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "broker_test_env.h"
#include "proc_inspect.h"

#define PAGE_BYTES (1u << 20)
#define SEQUENTIAL 8
#define BURST 16
/* Faults the broker takes per sequential 1 MiB lookup once warm: 0 with the
 * trim waiting for a quiet second, 230 with a trim after every answer
 * (malloc_trim also drops free chunks inside the heap; faba41d), 475 with
 * every buffer of 256 KiB or more mapped anew (a701990). */
#define MAX_FAULTS_PER_LOOKUP 40
/* Above the RSS after the sequential lookups, once the burst is over and the
 * broker idle: what the idle trim keeps on top of the heap (4 MiB) and slack. */
#define MAX_IDLE_GROWTH_MIB 8

static bench_env env;

static void stop_all(void)
{
    bench_env_teardown(&env, false);
}

TestSuite(broker_reuse, .fini = stop_all, .timeout = 300);

/* Minor page faults of pid, field 10 of /proc/PID/stat. */
static long minor_faults(pid_t pid)
{
    size_t len;
    char *stat = pi_read(pid, "stat", &len);
    cr_assert_not_null(stat);
    const char *p = strrchr(stat, ')'); /* the command name may hold spaces */
    cr_assert_not_null(p);
    long v = -1;
    cr_assert_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %ld", &v), 1);
    free(stat);
    return v;
}

static void lookups(bench_target *t, unsigned concurrency, unsigned n)
{
    bench_stats st;
    bench_plan plan = { .concurrency = concurrency, .requests = n, .time_cap_s = 120 };
    cr_assert_eq(bench_run_cell(&bench_verifetch, t, &plan, &st), 0, "%u of %u lookups failed: %s", st.failed, n,
                 st.first_error);
    cr_assert_eq(st.done, n);
}

Test(broker_reuse, one_page_after_another_reuses_the_buffers_and_a_burst_gives_them_back)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("AddressSanitizer's allocator is not glibc's: its faults and RSS say nothing of the broker's");
#endif
    broker_test_env_start(&env, "/tmp/vf-broker-reuse.XXXXXX");

    bench_target t = { .body_bytes = PAGE_BYTES, .min_text_chars = PAGE_BYTES / 2,
                       .socket_path = env.socket_path, .curl_path = "/usr/bin/curl" };
    snprintf(t.url, sizeof t.url, "http://127.0.0.1:%u/1m", env.plain_port);
    lookups(&t, 1, 3); /* warm: threads, thread caches, the heap's first growth */

    long before = minor_faults(env.broker_pid);
    lookups(&t, 1, SEQUENTIAL);
    double per_lookup = (double)(minor_faults(env.broker_pid) - before) / SEQUENTIAL;
    long settled_kib = pi_status_kib(env.broker_pid, "VmRSS");

    lookups(&t, BURST, BURST);
    long idle_kib = pi_status_kib(env.broker_pid, "VmRSS");
    for (int i = 0; i < 40 && (idle_kib - settled_kib) / 1024.0 > MAX_IDLE_GROWTH_MIB; i++) {
        usleep(100 * 1000); /* the trim comes once the broker has answered nothing for 1 s */
        idle_kib = pi_status_kib(env.broker_pid, "VmRSS");
    }
    cr_log_info("broker: %.0f page faults per sequential 1 MiB lookup; RSS %.1f MiB before a burst of %d, %.1f MiB "
                "idle after it", per_lookup, settled_kib / 1024.0, BURST, idle_kib / 1024.0);
    cr_assert_leq(per_lookup, MAX_FAULTS_PER_LOOKUP, "%.0f page faults per 1 MiB lookup: buffers are not reused",
                  per_lookup);
    cr_assert_leq((idle_kib - settled_kib) / 1024.0, MAX_IDLE_GROWTH_MIB,
                  "idle broker kept %.1f MiB after a burst of %d 1 MiB lookups (%.1f MiB before it)",
                  (idle_kib - settled_kib) / 1024.0, BURST, settled_kib / 1024.0);
    curl_global_cleanup();
}
