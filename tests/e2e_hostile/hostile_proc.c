/* /proc accounting of a running broker: descriptors, descendants, memory. */
#include "hostile.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

long hh_fd_count(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* ppid is field 4 of /proc/<pid>/stat; comm (field 2) may hold spaces and ')'. */
static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')');
    char state;
    int ppid;
    if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2)
        return -1;
    return (pid_t)ppid;
}

#define HH_MAX_PROCS 8192

size_t hh_descendants(pid_t root)
{
    static pid_t pids[HH_MAX_PROCS], parents[HH_MAX_PROCS];
    static bool below[HH_MAX_PROCS];
    size_t n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < HH_MAX_PROCS) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t p = (pid_t)atoi(e->d_name);
        pid_t pp = parent_of(p);
        if (pp < 0)
            continue;
        pids[n] = p;
        parents[n] = pp;
        below[n] = pp == root;
        n++;
    }
    closedir(d);
    /* Grow the set until no process has a parent inside it that is not counted. */
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < n; i++) {
            if (below[i])
                continue;
            for (size_t j = 0; j < n; j++)
                if (below[j] && pids[j] == parents[i]) {
                    below[i] = grew = true;
                    break;
                }
        }
    }
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += below[i];
    return count;
}

long hh_status_kib(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t flen = strlen(field);
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
            kib = strtol(line + flen + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kib;
}

hh_usage hh_usage_of(pid_t pid)
{
    hh_usage u = { .fds = hh_fd_count(pid), .procs = hh_descendants(pid) };
    return u;
}

static void pause_ms(long ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

hh_usage hh_usage_settle(pid_t pid, hh_usage base, unsigned timeout_ms)
{
    double deadline = hx_now_ms() + timeout_ms;
    for (;;) {
        hh_usage u = hh_usage_of(pid);
        if ((u.fds <= base.fds && u.procs <= base.procs) || hx_now_ms() >= deadline)
            return u;
        pause_ms(20);
    }
}

hh_usage hh_usage_steady(pid_t pid, unsigned timeout_ms)
{
    double deadline = hx_now_ms() + timeout_ms;
    hh_usage last = hh_usage_of(pid);
    double since = hx_now_ms();
    for (;;) {
        pause_ms(25);
        hh_usage u = hh_usage_of(pid);
        double now = hx_now_ms();
        if (u.fds != last.fds || u.procs != last.procs) {
            last = u;
            since = now;
        } else if (now - since >= 250 || now >= deadline) {
            return u;
        }
        if (now >= deadline)
            return u;
    }
}
