/* What this kernel charges for the operations a worker's life is made of: a
 * system call, the first touch of an anonymous page, and a fork + exit + wait.
 * Machines differ several-fold here (page-table isolation on or off, the
 * hypervisor's handling of page faults), and a sandboxed lookup pays ~100
 * faults and a fork where the floor pays neither; printed with every run so
 * figures from two machines are not read as a change in the code. */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define BATCHES 5
#define SYSCALLS_PER_BATCH 2000
#define PAGES_PER_BATCH 1024
#define FORKS_PER_BATCH 40

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return v[n / 2];
}

static double syscall_us(void)
{
    double t = bench_now_ms();
    for (int i = 0; i < SYSCALLS_PER_BATCH; i++)
        (void)getppid(); /* glibc does not cache it: a real entry each time */
    return (bench_now_ms() - t) * 1e3 / SYSCALLS_PER_BATCH;
}

static double page_fault_us(void)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)page * PAGES_PER_BATCH;
    volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    double t = bench_now_ms();
    for (size_t i = 0; i < PAGES_PER_BATCH; i++)
        p[i * (size_t)page] = 1;
    double us = (bench_now_ms() - t) * 1e3 / PAGES_PER_BATCH;
    munmap((void *)p, len);
    return us;
}

/* A forked child's first read of pages its parent had filled. Nearly free
 * where the hypervisor maps guest memory directly (EPT/NPT); a few
 * microseconds per page under shadow paging, where a new process's page
 * tables are rebuilt one trap at a time -- and a worker reads hundreds of
 * the zygote's pages. */
static double inherited_read_us(void)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)page * PAGES_PER_BATCH;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int fd[2];
    if (p == MAP_FAILED)
        return -1;
    memset(p, 1, len);
    double us = -1;
    if (pipe(fd) == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            volatile const char *v = p;
            unsigned sum = 0;
            double t = bench_now_ms();
            for (size_t i = 0; i < PAGES_PER_BATCH; i++)
                sum += (unsigned)v[i * (size_t)page];
            double r = sum == PAGES_PER_BATCH ? (bench_now_ms() - t) * 1e3 / PAGES_PER_BATCH : -1;
            _exit(write(fd[1], &r, sizeof r) == sizeof r ? 0 : 1);
        }
        close(fd[1]);
        if (pid > 0 && read(fd[0], &us, sizeof us) != sizeof us)
            us = -1;
        close(fd[0]);
        if (pid > 0)
            waitpid(pid, NULL, 0);
    }
    munmap(p, len);
    return us;
}

static double fork_ms(void)
{
    double t = bench_now_ms();
    for (int i = 0; i < FORKS_PER_BATCH; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid < 0 || waitpid(pid, NULL, 0) != pid)
            return -1;
    }
    return (bench_now_ms() - t) / FORKS_PER_BATCH;
}

void bench_kernel_cost_measure(bench_kernel_cost *k)
{
    double s[BATCHES], f[BATCHES], p[BATCHES], r[BATCHES];
    for (int b = 0; b < BATCHES; b++) { /* interleaved, so a burst of other load hits all four */
        s[b] = syscall_us();
        f[b] = page_fault_us();
        p[b] = fork_ms();
        r[b] = inherited_read_us();
    }
    k->syscall_us = median(s, BATCHES);
    k->page_fault_us = median(f, BATCHES);
    k->fork_exit_wait_ms = median(p, BATCHES);
    k->inherited_read_us = median(r, BATCHES);
}
