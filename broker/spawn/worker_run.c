#include "broker/spawn/worker_run.h"

#include "broker/spawn/fresh_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/local_cause.h"
#include "broker/spawn/cancel_wait.h"
#include "broker/spawn/subuid_map.h"
#include "broker/spawn/zygote_client.h"

#define VF_WORKER_IPC_FD 3
/* A worker that failed us gets this long to end by itself, so a crash is
 * reported as the signal it was, not as our kill. A zygote worker's end is
 * reported by the zygote, one more process to be scheduled on a busy host. */
#define FAILED_EXIT_GRACE_MS 200
#define FAILED_EXIT_GRACE_ZYGOTE_MS 1000

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

/* Packed: bit 31 known, bit 30 from the zygote, low bits the layers. */
static atomic_uint_least32_t last_confinement, last_exec_confinement;

static void note_confinement(bool from_zygote, uint32_t layers)
{
    uint32_t v = (1u << 31) | (from_zygote ? 1u << 30 : 0) | (layers & VF_LAYER_ALL);
    atomic_store(&last_confinement, v);
    if (!from_zygote)
        atomic_store(&last_exec_confinement, v);
}

bool vf_worker_exec_layers(uint32_t *layers)
{
    uint32_t v = (uint32_t)atomic_load(&last_exec_confinement);
    *layers = v & VF_LAYER_ALL;
    return v >> 31;
}

void vf_worker_last_confinement(vf_last_confinement *out)
{
    uint32_t v = (uint32_t)atomic_load(&last_confinement);
    *out = (vf_last_confinement){ .known = v >> 31, .from_zygote = (v >> 30) & 1u,
                                  .layers = v & VF_LAYER_ALL };
}

static int cancel_fd_of(const vf_worker_spec *spec)
{
    return spec->has_cancel ? spec->cancel_fd : -1;
}

/* ---- starting and reaping an exec'd worker ----------------------------- */

/* A failure to start a worker ("cannot <what>: ..."): VF_WORKER_RUN_LOCAL
 * with a "local: " detail when it is the broker's own exhaustion, else -1. */
static int start_failed(int err, const char *what, char *detail, size_t len)
{
    char step[400];
    snprintf(step, sizeof step, "cannot %s", what);
    if (!vf_local_exhaustion(err)) {
        snprintf(detail, len, "%s: %s", step, strerror(err));
        return -1;
    }
    vf_local_detail(detail, len, err, false, step);
    return VF_WORKER_RUN_LOCAL;
}

static int spawn_worker(const vf_worker_spec *spec, int child_fd, pid_t *pid)
{
    char *argv[] = { (char *)"verifetch-worker", NULL };
    /* child_fd -> VF_WORKER_IPC_FD; the mapped user namespace, if any, -> VF_WORKER_USERNS_FD */
    int fds[2] = { child_fd, vf_subuid_userns_fd() };
    return vf_fresh_spawn(spec->path, argv, fds, fds[1] >= 0 ? 2 : 1, pid);
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

/* ---- shared by both paths ----------------------------------------------- */

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void note_start(const vf_worker_spec *spec, bool from_zygote, int64_t t0_us)
{
    if (!spec->timing)
        return;
    spec->timing->from_zygote = from_zygote;
    spec->timing->started = true;
    spec->timing->spawn_seconds = (double)(now_us() - t0_us) / 1e6;
}

/* killed_by_us: at the job's deadline (at_deadline), or after the short
 * grace a worker that failed us gets to end by itself. */
static void describe_exit(int status, int killed_by_us, bool at_deadline, char *detail, size_t len,
                          const char *what)
{
    if (killed_by_us && at_deadline)
        snprintf(detail, len, "%s; worker did not finish in time and was killed (fetch budget ran out)", what);
    else if (killed_by_us)
        snprintf(detail, len, "%s; worker did not end after failing and was killed", what);
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

/* The job as this worker gets it: a zygote worker uses the CA its zygote
 * parsed when it is the same bundle; an exec'd one gets the zygote's compiled
 * seccomp program when it is the same executable. */
static vf_ipc_err encode_job(const vf_worker_spec *spec, const vf_job *job, bool from_zygote,
                             void **buf, size_t *len)
{
    vf_job wire = *job;
    wire.test_hook = (char *)spec->test_hook;
    wire.required_layers = spec->required_layers;
    if (from_zygote && wire.ca_pem && vf_zygote_has_ca(wire.ca_pem, wire.ca_pem_len)) {
        wire.ca_pem = NULL;
        wire.ca_pem_len = 0;
        wire.ca_preloaded = true;
    }
    if (!from_zygote && !wire.bpf)
        wire.bpf = (uint8_t *)vf_zygote_bpf_for(spec->path, &wire.bpf_len);
    return vf_job_encode(&wire, buf, len);
}

/* One result frame from a started worker. Returns 0 or describes the failure. */
static int receive_result(const vf_worker_spec *spec, const vf_job *job, int sock, int64_t kill_at,
                          vf_result *out, char *what, size_t what_len)
{
    if (vf_wait_fd(sock, POLLIN, cancel_fd_of(spec), kill_at) == VF_WAIT_CANCELLED) {
        snprintf(what, what_len, "cancelled: the lookup was abandoned");
        return -2;
    }
    void *payload = NULL;
    size_t plen = 0;
    vf_ipc_err e = vf_ipc_recv_frame_gated(sock, (size_t)job->max_body + VF_IPC_RESULT_OVERHEAD, kill_at,
                                           spec->result_gate, spec->result_gate_ctx, &payload, &plen, NULL);
    if (e == VF_IPC_OK) {
        const char *field = "";
        /* The frame becomes the text: no second copy of a page. */
        e = vf_result_decode_owned(payload, plen, (size_t)job->max_body, out, &field);
        if (e == VF_IPC_OK)
            return 0;
        snprintf(what, what_len, "worker sent a malformed result (%s%s%s)", vf_ipc_strerror(e),
                 field && *field ? " in field " : "", field ? field : "");
    } else if (e == VF_IPC_ERR_TIMEOUT) {
        snprintf(what, what_len, "worker gave no result before the deadline");
    } else if (e == VF_IPC_ERR_EOF) {
        snprintf(what, what_len, "worker ended without a result");
    } else if (e == VF_IPC_ERR_IO) {
        snprintf(what, what_len, "worker's channel failed while reading its result");
    } else {
        snprintf(what, what_len, "worker sent a malformed result (%s)", vf_ipc_strerror(e));
    }
    return -1;
}

/* The worker says which layers it applied; the broker holds it to the spec
 * even if the worker should already have refused. */
static int check_layers(const vf_worker_spec *spec, vf_result *out, char *detail, size_t len)
{
    uint32_t missing = spec->required_layers & ~out->layers;
    if (!missing)
        return 0;
    char names[160];
    vf_layers_describe(missing, names, sizeof names);
    snprintf(detail, len, "worker confinement incomplete: required %s not applied%s%s", names,
             out->transport_error ? "; worker said: " : "",
             out->transport_error && out->detail ? out->detail : "");
    vf_result_free(out);
    return -1;
}

/* A socketpair whose worker end is never fd 3 itself: dup2 onto itself would
 * keep CLOEXEC and the worker would lose fd 3. */
static int channel(int sv[2], char *detail, size_t len)
{
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return start_failed(errno, "create worker channel", detail, len);
    if (sv[1] == VF_WORKER_IPC_FD) {
        int moved = fcntl(sv[1], F_DUPFD_CLOEXEC, VF_WORKER_IPC_FD + 1);
        int err = errno;
        close(sv[1]);
        sv[1] = moved;
        errno = err;
    }
    if (sv[1] < 0) {
        int err = errno;
        close(sv[0]);
        return start_failed(err, "create worker channel", detail, len);
    }
    return 0;
}

/* ---- the exec path ------------------------------------------------------ */

static int run_exec(const vf_worker_spec *spec, const vf_job *job, int pass_fd, int64_t kill_at,
                    int64_t t0_us, vf_result *out, char *detail, size_t detail_len)
{
    int sv[2];
    int failed = channel(sv, detail, detail_len);
    if (failed)
        return failed;
    pid_t pid;
    if (spawn_worker(spec, sv[1], &pid) != 0) {
        char what[320];
        snprintf(what, sizeof what, "start worker %.300s", spec->path);
        failed = start_failed(errno, what, detail, detail_len);
        close(sv[0]);
        close(sv[1]);
        return failed;
    }
    close(sv[1]);
    note_start(spec, false, t0_us);
    int pidfd = pidfd_for(pid);
    char what[200];
    void *buf = NULL;
    size_t len = 0;
    int rc = -1;
    vf_ipc_err e = encode_job(spec, job, false, &buf, &len);
    if (e != VF_IPC_OK)
        snprintf(what, sizeof what, "cannot encode worker job (%s)", vf_ipc_strerror(e));
    else if (vf_ipc_send_frame(sv[0], buf, len, pass_fd) != VF_IPC_OK)
        snprintf(what, sizeof what, "worker did not take its job");
    else
        rc = receive_result(spec, job, sv[0], kill_at, out, what, sizeof what);
    free(buf);
    close(sv[0]);
    if (rc == -2) {            /* cancelled: no grace, the slot is wanted now */
        kill(pid, SIGKILL);
        rc = -1;
    }
    /* On success it may take until its deadline to exit; a worker that failed
     * us gets a short grace, so a crash is reported as the signal it was. */
    int64_t reap_deadline = rc == 0 ? kill_at : vf_now_ms() + FAILED_EXIT_GRACE_MS;
    if (reap_deadline > kill_at)
        reap_deadline = kill_at;
    int killed = 0;
    int status = reap(pid, pidfd, reap_deadline, &killed);
    bool at_deadline = reap_deadline == kill_at;
    if (pidfd >= 0)
        close(pidfd);
    if (rc != 0)
        describe_exit(status, killed, at_deadline, detail, detail_len, what);
    else
        note_confinement(false, out->layers);
    return rc;
}

/* ---- the zygote path ---------------------------------------------------- */

/* Returns 0/-1/VF_WORKER_RUN_LOCAL like vf_worker_run, or 1 when the zygote
 * is unavailable and nothing happened yet (the caller falls back to the exec path). The worker
 * was forked (and rehearsed) ahead of time and waits on its job socket, so
 * the job goes to it directly: no process but the worker runs for this fetch. */
static int run_zygote(const vf_worker_spec *spec, const vf_job *job, int pass_fd, int64_t kill_at,
                      int64_t t0_us, vf_result *out, char *detail, size_t detail_len)
{
    void *buf = NULL;
    size_t len = 0;
    vf_ipc_err e = encode_job(spec, job, true, &buf, &len);
    if (e != VF_IPC_OK) {
        snprintf(detail, detail_len, "cannot encode worker job (%s)", vf_ipc_strerror(e));
        return -1;
    }
    vf_zygote_worker w;
    vf_zygote_spawn_rc zr = vf_zygote_take_unclaimed(kill_at, cancel_fd_of(spec), &w, detail, detail_len);
    if (zr != VF_ZYGOTE_SPAWNED) {
        free(buf);
        return zr == VF_ZYGOTE_UNAVAILABLE ? 1 : zr == VF_ZYGOTE_LOCAL ? VF_WORKER_RUN_LOCAL : -1;
    }
    note_start(spec, true, t0_us);
    char what[200];
    int rc = -1;
    bool sent = vf_ipc_send_frame(w.ipc, buf, len, pass_fd) == VF_IPC_OK;
    vf_zygote_claim(&w, kill_at);
    if (!sent)
        snprintf(what, sizeof what, "worker did not take its job");
    else
        rc = receive_result(spec, job, w.ipc, kill_at, out, what, sizeof what);
    free(buf);
    if (rc == -2) {
        pidfd_send_signal(w.pidfd, SIGKILL, NULL, 0);  /* the zygote reaps it */
        snprintf(detail, detail_len, "%s; worker killed", what);
        rc = -1;
    } else if (rc != 0) {
        int status = 0, killed = 0;
        int64_t reap_deadline = vf_now_ms() + FAILED_EXIT_GRACE_ZYGOTE_MS;
        if (reap_deadline > kill_at)
            reap_deadline = kill_at;
        if (vf_zygote_wait(&w, reap_deadline, &status, &killed) != 0 && !killed)
            /* Never "status 0": that would claim a clean exit nobody saw. */
            snprintf(detail, detail_len, "%s; the zygote did not report how the worker ended", what);
        else
            describe_exit(status, killed, reap_deadline == kill_at, detail, detail_len, what);
    }
    if (rc == 0)
        note_confinement(true, out->layers);
    /* Done with it either way: the zygote kills it if it outlives kill_at, and
     * reaps it; nobody waits for that here. */
    vf_zygote_release(&w);
    return rc;
}

/* True (with detail) when the zygote is supervised but down and the last
 * exec'd worker lacked a layer this spec requires. */
static bool exec_lacks_required(const vf_worker_spec *spec, char *detail, size_t len)
{
    uint32_t layers = 0;
    if (!spec->required_layers || !vf_zygote_supervised() || !vf_worker_exec_layers(&layers))
        return false;
    uint32_t missing = spec->required_layers & ~layers;
    if (!missing)
        return false;
    char names[160];
    vf_layers_describe(missing, names, sizeof names);
    snprintf(detail, len, "no worker with the required confinement: the zygote is restarting "
             "and exec'd workers lack %s", names);
    return true;
}

int vf_worker_run(const vf_worker_spec *spec, vf_job *job, int pass_fd,
                  int64_t deadline_ms, vf_result *out, char *detail, size_t detail_len)
{
    memset(out, 0, sizeof *out);
    int64_t t0_us = now_us();
    if (spec->timing)
        *spec->timing = (vf_worker_timing){ 0 };
    int64_t kill_at = deadline_ms + VF_WORKER_GRACE_MS;
    int rc = 1;
    if (vf_zygote_serves(spec->path))
        rc = run_zygote(spec, job, pass_fd, kill_at, t0_us, out, detail, detail_len);
    if (rc == 1 && exec_lacks_required(spec, detail, detail_len)) {
        /* worker.require per spawn path: exec'd workers are known to lack a
         * required layer, so this lookup waits for the zygote's return
         * instead, and fails saying so if it does not come back in time. */
        if (vf_zygote_wait_up(deadline_ms, cancel_fd_of(spec)) && vf_zygote_serves(spec->path))
            rc = run_zygote(spec, job, pass_fd, kill_at, t0_us, out, detail, detail_len);
        if (rc == 1)
            return -1;
    }
    if (rc == 1)
        rc = run_exec(spec, job, pass_fd, kill_at, t0_us, out, detail, detail_len);
    if (rc != 0)
        return rc == VF_WORKER_RUN_LOCAL ? rc : -1;
    return check_layers(spec, out, detail, detail_len);
}
