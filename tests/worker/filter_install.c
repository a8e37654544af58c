/* What installing the worker's allowlist costs, by layout: every worker
 * installs it once, and the kernel then runs the program for every system
 * call number to fill its allow cache, JIT-compiles it, and frees it at exit.
 * Children forked from here each set no_new_privs and time one
 * prctl(PR_SET_SECCOMP) of (a) the binary tree a zygote worker loads (the
 * variant before its job), (b) the same rules listed one after another,
 * (c) a one-instruction "allow all" (what any install costs). The child
 * cannot write once confined, so it reports its microseconds (at most 254)
 * as its exit status. Interleaved rounds, medians. A benchmark
 * (meson test --benchmark filter_install): prints, and fails only if a child
 * could not install its program.
 *   VF_FILTER_CHILDREN  children per program per round (default 400)
 *   VF_FILTER_ROUNDS    rounds (default 5) */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "worker/sandbox/seccomp_filter.h"

#define MAX_CHILDREN 5000
#define MAX_ROUNDS 50

typedef struct {
    const char *name;
    struct sock_fprog prog;
    double round_median[MAX_ROUNDS];
} contender;

static int env_int(const char *name, int dflt, int max)
{
    const char *v = getenv(name);
    int n = v ? atoi(v) : dflt;
    return n < 1 ? 1 : n > max ? max : n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Microseconds one child took to install prog; -1 if it failed. */
static double one_install(const struct sock_fprog *prog)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
            _exit(255);
        long t0 = now_ns();
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) != 0)
            _exit(255);
        long us = (now_ns() - t0 + 500) / 1000;
        _exit(us > 254 ? 254 : (int)us);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) == 255)
        return -1;
    return WEXITSTATUS(st);
}

static struct sock_fprog exported(bool tree)
{
    void *code = NULL;
    size_t len = 0;
    char err[256] = "";
    int rc = tree ? vf_seccomp_export(VF_SECCOMP_BEFORE_JOB, &code, &len, err, sizeof err)
                  : vf_seccomp_export_listed(VF_SECCOMP_BEFORE_JOB, &code, &len, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "filter_install: %s\n", err);
        exit(1);
    }
    return (struct sock_fprog){ .len = (unsigned short)(len / sizeof(struct sock_filter)), .filter = code };
}

int main(void)
{
    int children = env_int("VF_FILTER_CHILDREN", 400, MAX_CHILDREN);
    int rounds = env_int("VF_FILTER_ROUNDS", 5, MAX_ROUNDS);
    static struct sock_filter allow_all[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
    contender c[] = {
        { .name = "tree (workers)", .prog = exported(true) },
        { .name = "listed", .prog = exported(false) },
        { .name = "allow-all", .prog = { .len = 1, .filter = allow_all } },
    };
    const size_t nc = sizeof c / sizeof c[0];
    static double us[MAX_CHILDREN];
    for (int r = 0; r < rounds; r++)
        for (size_t k = 0; k < nc; k++) {
            contender *x = &c[(k + (size_t)r) % nc];   /* a different one goes first each round */
            for (int i = 0; i < children; i++)
                if ((us[i] = one_install(&x->prog)) < 0) {
                    fprintf(stderr, "filter_install: a child could not install %s\n", x->name);
                    return 1;
                }
            x->round_median[r] = median(us, (size_t)children);
        }
    printf("filter_install: %d rounds x %d children per program, install time per child (us), "
           "median of the round medians [min-max]\n", rounds, children);
    double med[3];
    for (size_t k = 0; k < nc; k++) {
        double lo = c[k].round_median[0], hi = lo;
        for (int r = 1; r < rounds; r++) {
            lo = c[k].round_median[r] < lo ? c[k].round_median[r] : lo;
            hi = c[k].round_median[r] > hi ? c[k].round_median[r] : hi;
        }
        med[k] = median(c[k].round_median, (size_t)rounds);
        printf("  %-15s %3u instructions  %6.1f [%.1f-%.1f]\n", c[k].name, c[k].prog.len, med[k], lo, hi);
    }
    printf("  tree / listed %.2fx; above allow-all: tree %.1f us, listed %.1f us\n", med[0] / med[1],
           med[0] - med[2], med[1] - med[2]);
    return 0;
}
