/* Child processes and /proc reading for the benchmark. */
#include "bench.h"
#include "proc_inspect.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int bench_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= len ? -1 : n;
}

void bench_path(char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, BENCH_PATH_MAX, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= BENCH_PATH_MAX) {
        fprintf(stderr, "bench: path too long: %.80s...\n", buf);
        exit(2);
    }
}

double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void bench_sleep_ms(unsigned ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

pid_t bench_spawn(char *const argv[], int out_fd, int err_fd)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(out_fd >= 0 ? out_fd : devnull, 1);
    dup2(err_fd >= 0 ? err_fd : devnull, 2);
    close_range(3, ~0u, 0);
    execvp(argv[0], argv);
    dprintf(2, "bench: cannot exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

static int wait_for(pid_t pid, unsigned timeout_ms, int *status)
{
    double deadline = bench_now_ms() + timeout_ms;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
        if (bench_now_ms() >= deadline)
            return -1;
        bench_sleep_ms(2);
    }
}

int bench_run(char *const argv[], const char *log_path, unsigned timeout_ms)
{
    int log = log_path ? open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
    pid_t pid = bench_spawn(argv, log, log);
    if (log >= 0)
        close(log);
    if (pid < 0)
        return -1;
    int st = 0;
    if (wait_for(pid, timeout_ms, &st) != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return -1;
    }
    return st;
}

int bench_read_line(int fd, char *buf, size_t len, unsigned timeout_ms)
{
    double deadline = bench_now_ms() + timeout_ms;
    size_t used = 0;
    while (used + 1 < len) {
        int left = (int)(deadline - bench_now_ms());
        if (left <= 0)
            return -1;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r = poll(&p, 1, left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        if (c == '\n') {
            buf[used] = '\0';
            return 0;
        }
        buf[used++] = c;
    }
    return -1;
}

void bench_stop(pid_t pid, unsigned timeout_ms)
{
    if (pid <= 0)
        return;
    int st;
    kill(pid, SIGTERM);
    if (wait_for(pid, timeout_ms, &st) == 0)
        return;
    kill(pid, SIGKILL);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

int bench_reset_hwm(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/clear_refs", (int)pid);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* "5" resets the peak RSS (VmHWM) to the current RSS (proc(5)). */
    ssize_t w = write(fd, "5", 1);
    close(fd);
    return w == 1 ? 0 : -1;
}

pid_t bench_find_zygote(pid_t broker)
{
    pid_t kids[64];
    size_t n = pi_children(broker, kids, 64);
    for (size_t i = 0; i < n; i++)
        if (pi_is_zygote(kids[i]))
            return kids[i];
    return 0;
}

double bench_loadavg(void)
{
    FILE *f = fopen("/proc/loadavg", "re");
    double l = -1;
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}
