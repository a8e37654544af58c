/* The broker's peak memory under a burst of large pages stays bounded
 * (issue 15): a real verifetchd with its zygote and confined workers looks
 * up an 8 MiB page from the loopback benchmark origin on 16 threads at once,
 * each asking for 1,000,000 characters. The workers finish together (16
 * extractions share the cores), so before the text budget and the in-place
 * text path every result landed in the broker at once, ~4 copies of a page
 * each: 285 MiB above the broker after one lookup (main at 5e80c6f, 2 cores).
 * Now at most VF_TEXT_BUDGET_BYTES of page text is held at once. Memory does not depend
 * on machine load; the timeouts are generous.
 *
 * VERIFETCH_BUILD_ROOT names the build whose broker and worker run, so the
 * same test can be pointed at an older build to see it fail. */
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

#define PAGE_BYTES (8u << 20)
#define LOOKUPS 16
/* Above the broker's RSS after one lookup: the budget (32 MiB of frames),
 * the must_contain fold of the pages being judged, and the 1 MiB answers
 * waiting to be sent. Measured 46 MiB; 285 MiB before. */
#define MAX_GROWTH_MIB 80

static bench_env env;

static void stop_all(void)
{
    bench_env_teardown(&env, false);
}

TestSuite(broker_peak, .fini = stop_all, .timeout = 300);

/* The broker's stderr (its workers' too) holds no sanitizer report. */
static void assert_no_sanitizer_report(const char *log_path)
{
    FILE *f = fopen(log_path, "re");
    cr_assert_not_null(f, "%s", log_path);
    char line[1024];
    while (fgets(line, sizeof line, f))
        cr_assert_null(strstr(line, "Sanitizer"), "broker log %s: %s", log_path, line);
    fclose(f);
}

Test(broker_peak, sixteen_concurrent_8mib_pages_stay_within_the_bound)
{
    broker_test_env_start(&env, "/tmp/vf-broker-peak.XXXXXX");

    bench_target t = { .body_bytes = PAGE_BYTES, .min_text_chars = PAGE_BYTES / 2,
                       .socket_path = env.socket_path, .curl_path = "/usr/bin/curl" };
    snprintf(t.url, sizeof t.url, "http://127.0.0.1:%u/8m", env.plain_port);
    bench_stats st;
    bench_plan one = { .concurrency = 1, .requests = 1, .time_cap_s = 120 };
    cr_assert_eq(bench_run_cell(&bench_verifetch, &t, &one, &st), 0, "warm-up lookup: %s", st.first_error);

    long base_kib = pi_status_kib(env.broker_pid, "VmRSS");
    cr_assert_eq(bench_reset_hwm(env.broker_pid), 0);
    bench_plan burst = { .concurrency = LOOKUPS, .requests = LOOKUPS, .time_cap_s = 240 };
    int rc = bench_run_cell(&bench_verifetch, &t, &burst, &st);
    long peak_kib = pi_status_kib(env.broker_pid, "VmHWM");
    cr_assert_eq(rc, 0, "%u of %u lookups failed: %s", st.failed, LOOKUPS, st.first_error);
    cr_assert_eq(st.done, LOOKUPS);
    assert_no_sanitizer_report(env.broker_log);
#if defined(__SANITIZE_ADDRESS__)
    /* The lookups ran and the broker reported nothing; the figure is not
     * the broker's own. */
    curl_global_cleanup();
    cr_skip_test("AddressSanitizer's shadow memory and quarantine are no broker's real peak");
#endif
    double growth_mib = (double)(peak_kib - base_kib) / 1024.0;
    cr_log_info("broker RSS %.1f MiB after one lookup, peak %.1f MiB during %d concurrent 8 MiB lookups",
                base_kib / 1024.0, peak_kib / 1024.0, LOOKUPS);
    cr_assert_leq(growth_mib, MAX_GROWTH_MIB, "broker peak grew %.1f MiB over %.1f MiB for %d concurrent 8 MiB pages",
                  growth_mib, base_kib / 1024.0, LOOKUPS);
    curl_global_cleanup();
}
