/* Process plumbing for the e2e harness: spawn with a parent-death signal,
 * bounded waits, kill-and-reap, and /proc scans for leftover children. */
#include "harness_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "proc_inspect.h"


#define HX_MAX_TRACKED 32

static pid_t tracked[HX_MAX_TRACKED];
static size_t n_tracked;

double hx_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void hx_sleep_ms(unsigned ms) { sleep_ms(ms); }

void hx_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    cr_assert(n >= 0 && (size_t)n < len, "string too long for its %zu-byte buffer: %s", len, buf);
}

static int open_or_null(const char *path, int flags)
{
    return open(path ? path : "/dev/null", flags | O_CLOEXEC, 0600);
}

pid_t hx_spawn(char *const argv[], int in_fd, int out_fd, int err_fd, int deathsig)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* Die with the test process, even if it crashes before teardown. */
        prctl(PR_SET_PDEATHSIG, deathsig);
        if (getppid() != parent)
            _exit(127);
        if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
            _exit(127);
        closefrom(3);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], argv);
        _exit(127);
    }
    hx_track(pid);
    return pid;
}

void hx_track(pid_t pid)
{
    if (n_tracked < HX_MAX_TRACKED)
        tracked[n_tracked++] = pid;
}

static void untrack(pid_t pid)
{
    for (size_t i = 0; i < n_tracked; i++) {
        if (tracked[i] == pid) {
            tracked[i] = tracked[--n_tracked];
            return;
        }
    }
}

bool hx_wait_timeout(pid_t pid, unsigned timeout_ms, int *status)
{
    double deadline = hx_now_ms() + timeout_ms;
    for (;;) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            untrack(pid);
            if (status)
                *status = st;
            return true;
        }
        if (r < 0 && errno == ECHILD) {
            untrack(pid);
            if (status)
                *status = 0;
            return true;
        }
        if (hx_now_ms() >= deadline)
            return false;
        sleep_ms(5);
    }
}

int hx_kill_reap(pid_t pid, int first_signal, unsigned grace_ms)
{
    int st = 0;
    if (pid <= 0)
        return -1;
    kill(pid, first_signal);
    if (!hx_wait_timeout(pid, grace_ms, &st)) {
        kill(pid, SIGKILL);
        hx_wait_timeout(pid, 5000, &st);
    }
    return st;
}

void hx_reap_all(void)
{
    while (n_tracked > 0)
        hx_kill_reap(tracked[n_tracked - 1], SIGTERM, 3000);
    /* Orphans re-parented to us (we are a subreaper), e.g. a worker whose broker died. */
    pid_t kids[64];
    for (int round = 0; round < 3; round++) {
        size_t n = pi_children(getpid(), kids, 64);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++)
            hx_kill_reap(kids[i], SIGKILL, 2000);
    }
}

int hx_run(char *const argv[], const char *stdout_path, const char *stderr_path,
           unsigned timeout_ms)
{
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = open_or_null(stdout_path, O_WRONLY | O_CREAT | O_TRUNC);
    int err = open_or_null(stderr_path, O_WRONLY | O_CREAT | O_TRUNC);
    int st = -1;
    pid_t pid = (in >= 0 && out >= 0 && err >= 0) ? hx_spawn(argv, in, out, err, SIGKILL) : -1;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    if (err >= 0)
        close(err);
    if (pid < 0)
        return -1;
    if (!hx_wait_timeout(pid, timeout_ms, &st)) {
        hx_kill_reap(pid, SIGKILL, 1000);
        return -1;
    }
    return st;
}

size_t hx_wait_no_children(pid_t pid, unsigned timeout_ms)
{
    pid_t kids[64];
    double deadline = hx_now_ms() + timeout_ms;
    for (;;) {
        size_t all = pi_children(pid, kids, 64), n = 0;
        for (size_t i = 0; i < all; i++)
            n += !pi_is_zygote(kids[i]);  /* the zygote lives as long as the broker */
        if (n == 0 || hx_now_ms() >= deadline)
            return n;
        sleep_ms(10);
    }
}

char *hx_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *bigger = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}
