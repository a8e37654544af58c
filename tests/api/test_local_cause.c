/* Issue 14: the broker's own exhaustion is a local cause, not the origin's
 * or a provider's, for the errors a test cannot provoke for real: ENFILE
 * (the system-wide file table full) and ENOMEM/EAGAIN from the kernel when
 * the broker connects or starts a worker. A seccomp filter in a forked
 * child makes the real syscall (socket, socketpair, clone) fail with that
 * errno; the broker's own code runs unchanged. EMFILE is provoked for real
 * by an rlimit in test_connect_local.c and tests/e2e_hostile/test_pool_faults.c.
 * A control errno (EACCES, EPERM) shows the filter is not what makes a
 * failure "local". */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/lookup/resolve_connect.h"
#include "broker/spawn/worker_run.h"
#include "ipc/ipc_frame.h"

#include "child_report.h"

typedef struct {
    int rc;
    char detail[512];
} outcome;

typedef void (*under_fault)(outcome *out);

/* Syscall nr (and nr2, -1 for none) fail with err from here on. */
static int deny(long nr, long nr2, int err)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr2, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
    };
    struct sock_fprog prog = { .len = sizeof f / sizeof f[0], .filter = f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

typedef struct {
    long nr, nr2;
    int err;
    under_fault fn;
} fault_plan;

/* In the child: syscall nr (and nr2) fails with err, then fn runs; the child
 * ends with _exit (no atexit work, which could need the denied syscall). */
static void faulted_child(void *ctx, int report)
{
    const fault_plan *plan = ctx;
    outcome o = { .rc = 12345 };
    if (deny(plan->nr, plan->nr2, plan->err) != 0)
        snprintf(o.detail, sizeof o.detail, "seccomp filter refused: %s", strerror(errno));
    else
        plan->fn(&o);
    ssize_t w = write(report, &o, sizeof o);
    _exit(w == (ssize_t)sizeof o ? 0 : 1);
}

static outcome run_under(long nr, long nr2, int err, under_fault fn)
{
    fault_plan plan = { nr, nr2, err, fn };
    outcome o;
    int status;
    ssize_t got = child_report(faulted_child, &plan, &o, sizeof o, &status);
    cr_assert_eq(got, (ssize_t)sizeof o, "the child reported nothing (status %d)", status);
    cr_assert_neq(o.rc, 12345, "%s", o.detail);
    return o;
}

/* ---- connecting --------------------------------------------------------------- */

static void connect_loopback(outcome *out)
{
    vf_cidr allow[1];
    vf_cidr_parse("127.0.0.1/32", &allow[0]);
    vf_egress_policy p = { .allow = allow, .n_allow = 1, .any_port = true };
    vf_connection c;
    out->rc = (int)vf_resolve_connect("127.0.0.1", 9, &p, vf_now_ms() + 1000, &c);
    snprintf(out->detail, sizeof out->detail, "%s", c.detail);
}

Test(local_cause, enfile_when_connecting_is_local)
{
    outcome o = run_under(__NR_socket, -1, ENFILE, connect_loopback);
    cr_assert_eq(o.rc, VF_CONNECT_LOCAL, "status %d: %s", o.rc, o.detail);
    cr_assert_str_eq(o.detail, "local: too many open files (system-wide) in the broker "
                               "(connect to 127.0.0.1 port 9 not tried)");
}

Test(local_cause, enomem_when_connecting_is_local)
{
    outcome o = run_under(__NR_socket, -1, ENOMEM, connect_loopback);
    cr_assert_eq(o.rc, VF_CONNECT_LOCAL, "status %d: %s", o.rc, o.detail);
    cr_assert(strncmp(o.detail, "local: out of memory in the broker", 34) == 0, "%s", o.detail);
}

Test(local_cause, a_refused_socket_is_not_local)
{
    outcome o = run_under(__NR_socket, -1, EACCES, connect_loopback);
    cr_assert_eq(o.rc, VF_CONNECT_FAILED, "status %d: %s", o.rc, o.detail);
    cr_assert(strncmp(o.detail, "local:", 6) != 0, "%s", o.detail);
}

/* ---- starting a worker (the exec path: no zygote in this process) -------------- */

static void start_worker(outcome *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/worker/verifetch-worker", getenv("VERIFETCH_BUILD_ROOT"));
    vf_worker_spec spec = { .path = path, .cancel_fd = -1 };
    vf_job job = { .url = (char *)"http://127.0.0.1:9/", .connect_ip = (char *)"127.0.0.1", .port = 9,
                   .timeout_ms = 1000, .max_body = 4096 };
    vf_result res;
    out->rc = vf_worker_run(&spec, &job, 0, vf_now_ms() + 1000, &res, out->detail, sizeof out->detail);
}

Test(local_cause, enfile_creating_the_worker_channel_is_local)
{
    outcome o = run_under(__NR_socketpair, -1, ENFILE, start_worker);
    cr_assert_eq(o.rc, VF_WORKER_RUN_LOCAL, "rc %d: %s", o.rc, o.detail);
    cr_assert_str_eq(o.detail, "local: too many open files (system-wide) in the broker (cannot create worker channel)");
}

#ifdef __NR_clone3
#define NR_CLONE3 __NR_clone3
#else
#define NR_CLONE3 (-1)
#endif

Test(local_cause, enomem_starting_a_worker_is_local)
{
    outcome o = run_under(__NR_clone, NR_CLONE3, ENOMEM, start_worker);
    cr_assert_eq(o.rc, VF_WORKER_RUN_LOCAL, "rc %d: %s", o.rc, o.detail);
    cr_assert(strncmp(o.detail, "local: out of memory in the broker (cannot start worker ", 56) == 0, "%s", o.detail);
}

Test(local_cause, eagain_starting_a_worker_is_local)
{
    outcome o = run_under(__NR_clone, NR_CLONE3, EAGAIN, start_worker);
    cr_assert_eq(o.rc, VF_WORKER_RUN_LOCAL, "rc %d: %s", o.rc, o.detail);
    cr_assert(strncmp(o.detail, "local: no process left in the broker (cannot start worker ", 58) == 0, "%s", o.detail);
}

Test(local_cause, a_refused_worker_start_is_not_local)
{
    outcome o = run_under(__NR_clone, NR_CLONE3, EPERM, start_worker);
    cr_assert_eq(o.rc, -1, "rc %d: %s", o.rc, o.detail);
    cr_assert(strncmp(o.detail, "cannot start worker ", 20) == 0 && strstr(o.detail, strerror(EPERM)), "%s",
              o.detail);
}
