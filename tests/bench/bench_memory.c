/* Worker memory, two ways: the standalone launcher (exact, wait4 ru_maxrss)
 * and in-situ /proc sampling of the broker's own workers (a lower bound). */
#include "bench.h"
#include "proc_inspect.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int bench_worker_mem_run(const char *launcher_bin, const char *worker_bin, const bench_env *e,
                         const char *ca_file, bool tls, const char *path, size_t max_body,
                         bench_worker_mem *out)
{
    memset(out, 0, sizeof *out);
    out->hwm_sample_kib = -1;
    char url[256], port[16], body[32], line[512];
    unsigned short p = tls ? e->tls_port : e->plain_port;
    snprintf(url, sizeof url, "%s://127.0.0.1:%u%s", tls ? "https" : "http", p, path);
    snprintf(port, sizeof port, "%u", p);
    snprintf(body, sizeof body, "%zu", max_body);
    char *argv[] = { (char *)launcher_bin, (char *)worker_bin, url, "127.0.0.1", port, body,
                     tls ? (char *)ca_file : NULL, NULL };
    int pp[2];
    if (pipe2(pp, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = bench_spawn(argv, pp[1], 2);
    close(pp[1]);
    int r = pid > 0 ? bench_read_line(pp[0], line, sizeof line, 20000) : -1;
    close(pp[0]);
    int st = 0;
    if (pid > 0)
        waitpid(pid, &st, 0);
    char terr[64] = "";
    unsigned exit_status = 0;
    if (r != 0 || sscanf(line, "maxrss_kib=%ld hwm_sample_kib=%ld anon_kib=%ld file_kib=%ld launcher_kib=%ld "
                               "wall_ms=%ld cpu_us=%ld status=%d text_len=%ld terr=%63s exit=0x%x",
                         &out->maxrss_kib, &out->hwm_sample_kib, &out->anon_kib, &out->file_kib, &out->launcher_kib,
                         &out->wall_ms, &out->cpu_us, &out->http_status, &out->text_len, terr, &exit_status) != 11) {
        snprintf(out->detail, sizeof out->detail, "launcher gave no result (status 0x%x)", st);
        return -1;
    }
    out->ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && out->http_status == 200 &&
              strcmp(terr, "none") == 0;
    bench_fmt(out->detail, sizeof out->detail, "%s", line);   /* a cut detail is fine */
    return out->ok ? 0 : -1;
}

/* ---- in-situ sampler ---------------------------------------------------- */

#define SAMPLER_MAX_PIDS 8192

struct bench_sampler {
    pid_t broker;
    pid_t zygote;                /* not a worker: it runs for the broker's lifetime */
    pthread_t thread;
    atomic_bool stop;
    pid_t pids[SAMPLER_MAX_PIDS];
    long hwm[SAMPLER_MAX_PIDS];
    unsigned n;
};

typedef struct {
    char name[32];
    pid_t ppid;
    long hwm_kib;
} proc_status;

static int read_status(const char *pid, proc_status *ps)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%s/status", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    ps->name[0] = '\0';
    ps->ppid = -1;
    ps->hwm_kib = -1;
    for (char *line = buf; line && *line;) {
        if (strncmp(line, "Name:\t", 6) == 0)
            sscanf(line + 6, "%31s", ps->name);
        else if (strncmp(line, "PPid:", 5) == 0)
            ps->ppid = (pid_t)strtol(line + 5, NULL, 10);
        else if (strncmp(line, "VmHWM:", 6) == 0)
            ps->hwm_kib = strtol(line + 6, NULL, 10);
        char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

static int slot_of(bench_sampler *s, pid_t pid)
{
    for (unsigned i = 0; i < s->n; i++)
        if (s->pids[i] == pid)
            return (int)i;
    return -1;
}

/* A worker is a process named verifetch-worker (comm keeps 15 chars) or
 * vf-zygote (a forked worker keeps the zygote's name until it renames itself)
 * whose parent is the broker, the broker's zygote, or another worker (a worker
 * may fork once more inside its pid namespace). The zygote itself is not one. */
static void scan_once(bench_sampler *s)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        proc_status ps;
        if (read_status(de->d_name, &ps) != 0 || ps.hwm_kib < 0 ||
            (strncmp(ps.name, "verifetch-worke", 15) != 0 && strncmp(ps.name, "vf-zygote", 9) != 0))
            continue;
        pid_t pid = (pid_t)atoi(de->d_name);
        if (pid == s->zygote)
            continue;
        if (ps.ppid == s->broker && !s->zygote && pi_is_zygote(pid)) {
            s->zygote = pid;
            continue;
        }
        if (ps.ppid != s->broker && ps.ppid != s->zygote && slot_of(s, ps.ppid) < 0)
            continue;
        int i = slot_of(s, pid);
        if (i < 0 && s->n < SAMPLER_MAX_PIDS) {
            i = (int)s->n++;
            s->pids[i] = pid;
            s->hwm[i] = 0;
        }
        if (i >= 0 && ps.hwm_kib > s->hwm[i])
            s->hwm[i] = ps.hwm_kib;
    }
    closedir(d);
}

static void *sampler_main(void *p)
{
    bench_sampler *s = p;
    while (!atomic_load(&s->stop)) {
        scan_once(s);
        usleep(200);
    }
    return NULL;
}

bench_sampler *bench_sampler_start(pid_t broker_pid)
{
    bench_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->broker = broker_pid;
    s->zygote = bench_find_zygote(broker_pid);
    if (pthread_create(&s->thread, NULL, sampler_main, s) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

void bench_sampler_stop(bench_sampler *s, long *max_hwm_kib, unsigned *workers_seen)
{
    *max_hwm_kib = -1;
    *workers_seen = 0;
    if (!s)
        return;
    atomic_store(&s->stop, true);
    pthread_join(s->thread, NULL);
    for (unsigned i = 0; i < s->n; i++)
        if (s->hwm[i] > *max_hwm_kib)
            *max_hwm_kib = s->hwm[i];
    *workers_seen = s->n;
    free(s);
}
