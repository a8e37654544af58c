/* Who spent the CPU: this process, its reaped curl children, the broker,
 * the broker's reaped workers and the origin. */
#include "bench.h"
#include "proc_inspect.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Zygotes (one, and a few retiring) and fresh-spawned workers (the broker's
 * worker.max_concurrent, 64 in the benchmark's configuration). */
#define BROKER_CHILDREN_MAX 256

static double tv_ms(struct timeval tv)
{
    return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

/* From /proc/<pid>/stat: parent, start time (ticks since boot), utime+stime
 * (own) and cutime+cstime (reaped children) in ms. -1 when the process is gone. */
static int proc_stat(const char *pid, int *ppid, unsigned long long *start, double *own_ms, double *children_ms)
{
    *own_ms = *children_ms = 0;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* Fields after the command name, which may hold spaces, start past the last ')'. */
    char *p = strrchr(buf, ')');
    unsigned long long ut, st;
    long long cut, cst;
    if (!p || sscanf(p + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld %*d %*d %*d %*d %llu",
                     ppid, &ut, &st, &cut, &cst, start) != 6)
        return -1;
    double tick_ms = 1e3 / (double)sysconf(_SC_CLK_TCK);
    *own_ms = (double)(ut + st) * tick_ms;
    *children_ms = (double)(cut + cst) * tick_ms;
    return 0;
}

static void proc_cpu(pid_t pid, double *own_ms, double *children_ms)
{
    char name[16];
    int ppid;
    unsigned long long start;
    snprintf(name, sizeof name, "%d", (int)pid);
    proc_stat(name, &ppid, &start, own_ms, children_ms);
}

/* The broker, its children and what they reaped. Every child counts, not one
 * zygote found by its command line: a retired zygote drains beside the new
 * one for a while, and once it exits it is a zombie without a command line
 * until the broker reaps it. A child's own and reaped time (a zygote's
 * workers) count until the broker reaps it, and then all of it is in the
 * broker's reaped time, so the sum never drops and one cell cannot lose a
 * zygote's history to the next. A child reaped while the children are being
 * read would count twice or not at all: the broker's reaped time moves then,
 * and the reading is taken again. */
static void broker_tree_cpu(pid_t broker, bench_cpu *out)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        double reaped_before, reaped_after;
        proc_cpu(broker, &out->broker_ms, &reaped_before);
        out->zygote_ms = 0;
        out->workers_ms = reaped_before;
        pid_t kids[BROKER_CHILDREN_MAX];
        size_t n = pi_children(broker, kids, BROKER_CHILDREN_MAX);
        for (size_t i = 0; i < n; i++) {
            double own, reaped;
            proc_cpu(kids[i], &own, &reaped);
            out->zygote_ms += own;
            out->workers_ms += reaped;
        }
        proc_cpu(broker, &out->broker_ms, &reaped_after);
        if (reaped_after == reaped_before)
            return;
    }
}

/* Kernel threads (kthreadd, pid 2, and its children) come and go, and an
 * exited one takes its CPU time with it, so a plain sum could shrink. Keep
 * each thread's last reading and add only what it gained since: monotonic,
 * at worst short by what an exiting thread did since the previous call. */
#define KTHREADS_MAX 4096
typedef struct {
    int pid;
    unsigned long long start;    /* with pid, names one thread even across pid reuse */
    double ms;
} kthread_reading;
static kthread_reading kt_seen[KTHREADS_MAX];
static size_t kt_n;
static bool kt_primed;
static double kt_total;

double bench_kthreads_ms(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return kt_total;
    static kthread_reading now[KTHREADS_MAX];
    size_t n_now = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n_now < KTHREADS_MAX) {
        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        int ppid, pid = atoi(de->d_name);
        unsigned long long start;
        double own, reaped;
        if (proc_stat(de->d_name, &ppid, &start, &own, &reaped) != 0 || (ppid != 2 && pid != 2))
            continue;
        double before = kt_primed ? 0 : own;   /* the first call only takes readings */
        for (size_t i = 0; i < kt_n; i++)
            if (kt_seen[i].pid == pid && kt_seen[i].start == start) {
                before = kt_seen[i].ms;
                break;
            }
        kt_total += own - before;
        now[n_now].pid = pid;
        now[n_now].start = start;
        now[n_now].ms = own;
        n_now++;
    }
    closedir(d);
    memcpy(kt_seen, now, n_now * sizeof now[0]);
    kt_n = n_now;
    kt_primed = true;
    return kt_total;
}

void bench_cpu_snapshot(const struct bench_env *e, bench_cpu *out)
{
    memset(out, 0, sizeof *out);
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    out->client_ms = tv_ms(self.ru_utime) + tv_ms(self.ru_stime) - bench_cpu_not_client_total_ms();
    out->curl_ms = tv_ms(kids.ru_utime) + tv_ms(kids.ru_stime);
    double unused;
    broker_tree_cpu(e->broker_pid, out);
    proc_cpu(e->origin_pid, &out->origin_ms, &unused);
    out->kthreads_ms = bench_kthreads_ms();
}

double bench_machine_busy_ms(void)
{
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return -1;
    unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle, &iowait, &irq,
                   &softirq, &steal);
    fclose(f);
    if (n != 8)
        return -1;
    return (double)(user + nice + sys + irq + softirq + steal) * 1e3 / (double)sysconf(_SC_CLK_TCK);
}

double bench_busy_share(unsigned ms)
{
    double before = bench_machine_busy_ms(), t0 = bench_now_ms();
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
    double after = bench_machine_busy_ms(), wall = bench_now_ms() - t0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (before < 0 || after < 0 || wall <= 0 || cpus <= 0)
        return -1;
    return (after - before) / (wall * (double)cpus);
}

double bench_cpu_total(const bench_cpu *c)
{
    return c->client_ms + c->curl_ms + c->broker_ms + c->workers_ms + c->zygote_ms + c->origin_ms + c->kthreads_ms;
}

void bench_cpu_per_fetch(const bench_cpu *before, const bench_cpu *after, unsigned fetches, bench_cpu *out)
{
    double n = fetches ? fetches : 1;
    out->client_ms = (after->client_ms - before->client_ms) / n;
    out->curl_ms = (after->curl_ms - before->curl_ms) / n;
    out->broker_ms = (after->broker_ms - before->broker_ms) / n;
    out->workers_ms = (after->workers_ms - before->workers_ms) / n;
    out->origin_ms = (after->origin_ms - before->origin_ms) / n;
    out->zygote_ms = (after->zygote_ms - before->zygote_ms) / n;
    out->kthreads_ms = (after->kthreads_ms - before->kthreads_ms) / n;
}
