/* Measure a verifetch worker's peak RSS for one fetch, outside the broker.
 *
 *   verifetch-bench-worker-rss WORKER URL IP PORT MAX_BODY [CA_FILE|- [RENDER]]
 *
 * (RENDER: the job's VF_RENDER_* mask, a number; default 0 = Markdown of the main content)
 *
 * It does what the broker's direct provider does for one hop (connect, spawn
 * the worker on fd 3 with an empty environment, send the same job frame with
 * the connected socket, read the result) and then reaps the worker with
 * wait4(), whose ru_maxrss is the worker's peak RSS.
 *
 * Why a separate, small launcher: Linux carries the pre-exec address space's
 * high-water mark into ru_maxrss across execve(), so a child forked (or worse,
 * vforked) from a big process reports that process's size. This launcher
 * links only libc and msgpack, and prints its own VmHWM as launcher_kib: the
 * most fork() could have contributed. When maxrss_kib > launcher_kib the figure
 * is the worker's own. As a cross-check it also reads the worker's VmHWM from
 * /proc while the worker is still alive sending its result (a large result
 * fills the socket buffer, so the worker is blocked in write at its peak).
 *
 * Prints one line: maxrss_kib=.. hwm_sample_kib=.. anon_kib=.. file_kib=..
 * launcher_kib=.. wall_ms=.. cpu_us=.. status=.. text_len=.. terr=.. exit=0x.. ipc=..
 * (anon/file: RssAnon/RssFile at the sample, i.e. heap vs mapped libraries;
 * wall_ms: fork to reaped; cpu_us: the worker's user+system time from wait4)
 * Exit 0 when the worker exited 0 with a result.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/ipc_messages.h"
#include "proc_inspect.h"

#define WORKER_IPC_FD 3
#define JOB_TIMEOUT_MS 15000u

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, used = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        if (used == cap) {
            uint8_t *nb = cap < VF_IPC_MAX_JOB_FRAME ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + used, 1, cap - used, f);
        if (r == 0)
            break;
        used += r;
    }
    fclose(f);
    *len = used;
    return buf;
}

static int connect_to(const char *ip, unsigned port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The worker's side of the spawn, as broker/worker_run.c sets it up. */
static void exec_worker(const char *worker, int ipc_fd)
{
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(devnull, 1);
    if (ipc_fd == WORKER_IPC_FD)
        fcntl(ipc_fd, F_SETFD, 0);
    else
        dup2(ipc_fd, WORKER_IPC_FD);
    close_range(WORKER_IPC_FD + 1, ~0u, 0);
    setsid();
    char *argv[] = { "verifetch-worker", NULL };
    char *envp[] = { NULL };
    execve(worker, argv, envp);
    _exit(127);
}

int main(int argc, char **argv)
{
    if (argc < 6 || argc > 8) {
        fprintf(stderr, "usage: %s WORKER URL IP PORT MAX_BODY [CA_FILE|- [RENDER]]\n", argv[0]);
        return 2;
    }
    vf_job job = {
        .url = argv[2], .connect_ip = argv[3], .port = (uint16_t)strtoul(argv[4], NULL, 10),
        .timeout_ms = JOB_TIMEOUT_MS, .max_body = strtoull(argv[5], NULL, 10), .mode = VF_MODE_RAW,
        .render = argc == 8 ? (uint32_t)strtoul(argv[7], NULL, 0) & VF_RENDER_ALL : 0,
    };
    bool with_ca = argc >= 7 && strcmp(argv[6], "-") != 0;
    if (with_ca && !(job.ca_pem = read_file(argv[6], &job.ca_pem_len))) {
        fprintf(stderr, "cannot read %s\n", argv[6]);
        return 1;
    }
    void *frame = NULL;
    size_t frame_len = 0;
    int sv[2];
    int tcp = connect_to(job.connect_ip, job.port);
    if (tcp < 0 || vf_job_encode(&job, &frame, &frame_len) != VF_IPC_OK ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        fprintf(stderr, "setup failed: %s\n", strerror(errno));
        return 1;
    }
    long launcher_kib = pi_status_kib(getpid(), "VmHWM");
    int64_t t0 = vf_now_ms();
    pid_t pid = fork();
    if (pid == 0)
        exec_worker(argv[1], sv[1]);
    close(sv[1]);
    if (pid < 0 || vf_ipc_send_frame(sv[0], frame, frame_len, tcp) != VF_IPC_OK) {
        fprintf(stderr, "cannot start the worker or send its job\n");
        return 1;
    }
    close(tcp);

    struct pollfd p = { .fd = sv[0], .events = POLLIN };
    long hwm_sample = -1, anon = -1, file = -1;
    if (poll(&p, 1, (int)JOB_TIMEOUT_MS + 1000) == 1) {
        hwm_sample = pi_status_kib(pid, "VmHWM");
        anon = pi_status_kib(pid, "RssAnon");
        file = pi_status_kib(pid, "RssFile");
    }
    void *payload = NULL;
    size_t plen = 0;
    vf_result res;
    memset(&res, 0, sizeof res);
    vf_ipc_err e = vf_ipc_recv_frame(sv[0], (size_t)job.max_body + VF_IPC_RESULT_OVERHEAD,
                                     vf_now_ms() + JOB_TIMEOUT_MS + 1000, &payload, &plen, NULL);
    if (e == VF_IPC_OK)
        e = vf_result_decode(payload, plen, (size_t)job.max_body, &res, NULL);
    free(payload);
    close(sv[0]);

    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
        ;
    int64_t wall_ms = vf_now_ms() - t0;
    long long cpu_us = (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec +
                       ru.ru_stime.tv_usec;
    printf("maxrss_kib=%ld hwm_sample_kib=%ld anon_kib=%ld file_kib=%ld launcher_kib=%ld wall_ms=%lld cpu_us=%lld "
           "status=%d text_len=%zu terr=%s exit=0x%x ipc=%s\n",
           ru.ru_maxrss, hwm_sample, anon, file, launcher_kib, (long long)wall_ms, cpu_us, (int)res.http_status, res.text_len,
           res.transport_error ? res.transport_error : "none", st, vf_ipc_strerror(e));
    int ok = e == VF_IPC_OK && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    vf_result_free(&res);
    free(frame);
    free(job.ca_pem);
    return ok ? 0 : 1;
}
