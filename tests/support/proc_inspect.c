/* /proc readers shared by the tests (proc_inspect.h). */
#include "proc_inspect.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PI_MAX_PROCS 8192
#define PI_MAX_FILE (16u << 20)

char *pi_read(pid_t pid, const char *what, size_t *len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *bigger = cap < PI_MAX_FILE ? realloc(buf, cap * 2) : NULL;
            if (!bigger)
                break;
            buf = bigger;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

pid_t pi_parent(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* comm (field 2) may hold spaces and ')': ppid follows the last ')'. */
    const char *close_paren = strrchr(buf, ')');
    char state;
    int ppid;
    if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2)
        return -1;
    return (pid_t)ppid;
}

/* Every process with its parent; returns the count (0 when /proc is unreadable). */
static size_t list_processes(pid_t *pids, pid_t *parents, size_t max)
{
    size_t n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t p = (pid_t)atoi(e->d_name);
        pid_t pp = pi_parent(p);
        if (pp < 0)
            continue;   /* gone since readdir */
        pids[n] = p;
        parents[n] = pp;
        n++;
    }
    closedir(d);
    return n;
}

size_t pi_children(pid_t pid, pid_t *out, size_t max)
{
    pid_t *pids = malloc(PI_MAX_PROCS * sizeof *pids);
    pid_t *parents = malloc(PI_MAX_PROCS * sizeof *parents);
    size_t n = pids && parents ? list_processes(pids, parents, PI_MAX_PROCS) : 0, found = 0;
    for (size_t i = 0; i < n && found < max; i++)
        if (parents[i] == pid)
            out[found++] = pids[i];
    free(pids);
    free(parents);
    return found;
}

size_t pi_descendants(pid_t root, pid_t *out, size_t max)
{
    pid_t *pids = malloc(PI_MAX_PROCS * sizeof *pids);
    pid_t *parents = malloc(PI_MAX_PROCS * sizeof *parents);
    bool *below = calloc(PI_MAX_PROCS, sizeof *below);
    size_t n = pids && parents && below ? list_processes(pids, parents, PI_MAX_PROCS) : 0;
    for (size_t i = 0; i < n; i++)
        below[i] = parents[i] == root && pids[i] != root;
    /* Grow the set until no process has a parent inside it that is not counted. */
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < n; i++) {
            if (below[i] || pids[i] == root)
                continue;
            for (size_t j = 0; j < n; j++)
                if (below[j] && pids[j] == parents[i]) {
                    below[i] = grew = true;
                    break;
                }
        }
    }
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (!below[i])
            continue;
        if (count < max)
            out[count] = pids[i];
        count++;
    }
    free(pids);
    free(parents);
    free(below);
    return count;
}

long pi_fd_count(pid_t pid)
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

long pi_status_number(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t flen = strlen(field);
    long n = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
            n = strtol(line + flen + 1, NULL, 10);
            break;
        }
    fclose(f);
    return n;
}

long pi_status_kib(pid_t pid, const char *field)
{
    return pi_status_number(pid, field);
}

bool pi_is_worker(pid_t pid)
{
    char *cmd = pi_read(pid, "cmdline", NULL);
    bool yes = cmd && strncmp(cmd, "verifetch-worker", 16) == 0;
    free(cmd);
    return yes;
}

bool pi_is_zygote(pid_t pid)
{
    size_t len = 0;
    char *cmd = pi_read(pid, "cmdline", &len);
    size_t first = cmd ? strnlen(cmd, len) : 0;
    bool yes = cmd && first + 1 < len && strcmp(cmd + first + 1, "--zygote") == 0;
    free(cmd);
    return yes;
}
