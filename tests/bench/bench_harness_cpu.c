/* The harness's own CPU inside the client process, kept apart so a cell's
 * client CPU is what a real client would spend (bench.h). */
#include "bench.h"

#include <stdatomic.h>
#include <time.h>

/* In microseconds, so any thread can add without a lock. */
static atomic_llong not_client_us;

double bench_thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void bench_cpu_not_client(double ms)
{
    if (ms > 0)
        atomic_fetch_add(&not_client_us, (long long)(ms * 1e3));
}

double bench_cpu_not_client_total_ms(void)
{
    return atomic_load(&not_client_us) / 1e3;
}
