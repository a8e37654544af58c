#include "broker/worker_run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define VF_WORKER_IPC_FD 3

const char *vf_signal_description(int sig)
{
    switch (sig) {
    case SIGSYS: return "SIGSYS (seccomp violation)";
    case SIGSEGV: return "SIGSEGV (crashed)";
    case SIGKILL: return "SIGKILL";
    case SIGXCPU: return "SIGXCPU (CPU limit)";
    case SIGXFSZ: return "SIGXFSZ (file size limit)";
    case SIGABRT: return "SIGABRT (aborted)";
    case SIGBUS: return "SIGBUS (crashed)";
    default: return NULL;
    }
}

static int spawn_worker(const vf_worker_spec *spec, int child_fd, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    if (posix_spawnattr_init(&attr) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, child_fd, VF_WORKER_IPC_FD);
    /* Nothing else of the broker's crosses exec, CLOEXEC or not. */
    posix_spawn_file_actions_addclosefrom_np(&fa, VF_WORKER_IPC_FD + 1);

    sigset_t none, all_defaults;
    sigemptyset(&none);
    sigfillset(&all_defaults);
    sigdelset(&all_defaults, SIGKILL);
    sigdelset(&all_defaults, SIGSTOP);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all_defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);

    char *argv[] = { (char *)"verifetch-worker", NULL };
    char *envp[] = { NULL };     /* keys may live in the broker's environment */
    int rc = posix_spawn(pid, spec->path, &fa, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

static int pidfd_for(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Wait for exit until the deadline; kill it after. Returns the wait status. */
static int reap(pid_t pid, int pidfd, int64_t deadline_ms, int *killed)
{
    *killed = 0;
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR)
            return 0;
        int64_t left = deadline_ms - vf_now_ms();
        if (left <= 0 || pidfd < 0) {
            kill(pid, SIGKILL);
            *killed = 1;
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return status;
        }
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        poll(&p, 1, left > 1000 ? 1000 : (int)left);
    }
}

static void describe_exit(int status, int killed_by_us, char *detail, size_t len, const char *what)
{
    if (killed_by_us)
        snprintf(detail, len, "%s; worker did not finish in time and was killed", what);
    else if (WIFSIGNALED(status)) {
        const char *d = vf_signal_description(WTERMSIG(status));
        if (d)
            snprintf(detail, len, "%s; worker killed by %s", what, d);
        else
            snprintf(detail, len, "%s; worker killed by signal %d", what, WTERMSIG(status));
    } else if (WIFEXITED(status))
        snprintf(detail, len, "%s; worker exited with status %d", what, WEXITSTATUS(status));
    else
        snprintf(detail, len, "%s", what);
}

int vf_worker_run(const vf_worker_spec *spec, vf_job *job, int pass_fd,
                  int64_t deadline_ms, vf_result *out, char *detail, size_t detail_len)
{
    memset(out, 0, sizeof *out);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(detail, detail_len, "cannot create worker channel: %s", strerror(errno));
        return -1;
    }
    job->test_hook = (char *)spec->test_hook;
    void *buf = NULL;
    size_t len = 0;
    vf_ipc_err e = vf_job_encode(job, &buf, &len);
    job->test_hook = NULL;
    if (e != VF_IPC_OK) {
        snprintf(detail, detail_len, "cannot encode worker job (%s)", vf_ipc_strerror(e));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    /* dup2 onto itself would keep CLOEXEC and the worker would lose fd 3. */
    if (sv[1] == VF_WORKER_IPC_FD) {
        int moved = fcntl(sv[1], F_DUPFD_CLOEXEC, VF_WORKER_IPC_FD + 1);
        close(sv[1]);
        sv[1] = moved;
    }
    pid_t pid;
    if (sv[1] < 0 || spawn_worker(spec, sv[1], &pid) != 0) {
        snprintf(detail, detail_len, "cannot start worker %s: %s", spec->path, strerror(errno));
        free(buf);
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    close(sv[1]);
    int pidfd = pidfd_for(pid);
    int64_t kill_at = deadline_ms + VF_WORKER_GRACE_MS;

    int rc = -1;
    const char *what = NULL;
    char what_buf[160];
    e = vf_ipc_send_frame(sv[0], buf, len, pass_fd);
    free(buf);
    if (e != VF_IPC_OK) {
        what = "worker did not take its job";
    } else {
        void *payload = NULL;
        size_t plen = 0;
        e = vf_ipc_recv_frame(sv[0], (size_t)job->max_body + VF_IPC_RESULT_OVERHEAD, kill_at,
                              &payload, &plen, NULL);
        if (e == VF_IPC_OK) {
            const char *field = "";
            e = vf_result_decode(payload, plen, (size_t)job->max_body, out, &field);
            free(payload);
            if (e == VF_IPC_OK)
                rc = 0;
            else {
                snprintf(what_buf, sizeof what_buf, "worker sent a malformed result (%s%s%s)",
                         vf_ipc_strerror(e), field && *field ? " in field " : "", field ? field : "");
                what = what_buf;
            }
        } else if (e == VF_IPC_ERR_TIMEOUT) {
            what = "worker gave no result before the deadline";
        } else if (e == VF_IPC_ERR_EOF) {
            what = "worker ended without a result";
        } else {
            snprintf(what_buf, sizeof what_buf, "worker sent a malformed result (%s)", vf_ipc_strerror(e));
            what = what_buf;
        }
    }
    close(sv[0]);
    int killed = 0;
    /* A worker that failed us gets a short grace to exit on its own, so a
     * crash is reported as the signal it was, not as our kill. */
    int64_t reap_deadline = rc == 0 ? kill_at : vf_now_ms() + 200;
    if (reap_deadline > kill_at)
        reap_deadline = kill_at;
    int status = reap(pid, pidfd, reap_deadline, &killed);
    if (pidfd >= 0)
        close(pidfd);
    if (rc != 0)
        describe_exit(status, killed, detail, detail_len, what);
    return rc;
}
