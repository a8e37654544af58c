/* The exec'd worker's confinement: the layers it reports are the ones it is
 * in, and a seccomp program handed over in the job ("bpf") is the one that
 * gets loaded -- validated first, never silently replaced. */
#include <criterion/criterion.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "worker/sandbox/sanitizer.h"
#include "worker/sandbox/seccomp_filter.h"

#define WAIT_MS 15000

static const char *page(size_t *len)
{
    static char *resp;
    static size_t resp_len;
    if (!resp) {
        const char *body = "<p>confined page</p>";
        resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/html", body, strlen(body),
                             &resp_len);
    }
    *len = resp_len;
    return resp;
}

static void run_job(const char *exe, vf_job *job, worker_run *r, bool keep_alive)
{
    test_origin o;
    memset(&o, 0, sizeof o);
    o.response = page(&o.response_len);
    origin_start(&o);
    char url[128];
    snprintf(url, sizeof url, "http://origin.test:%u/", o.port);
    vf_job base = basic_job(url);
    base.test_hook = job->test_hook;
    base.bpf = job->bpf;
    base.bpf_len = job->bpf_len;
    base.required_layers = job->required_layers;
    if (keep_alive)
        run_worker_keep_alive(worker_path(exe), &base, origin_connect(&o), WAIT_MS, r);
    else
        run_worker(worker_path(exe), &base, origin_connect(&o), WAIT_MS, r);
    origin_stop(&o);
}

static bool shares_ns(pid_t pid, const char *ns)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "/proc/%d/ns/%s", (int)pid, ns);
    snprintf(b, sizeof b, "/proc/self/ns/%s", ns);
    struct stat sa, sb;
    cr_assert_eq(stat(a, &sa), 0);
    cr_assert_eq(stat(b, &sb), 0);
    return sa.st_ino == sb.st_ino;
}

Test(worker_confine, exec_worker_reports_and_is_in_its_layers)
{
    vf_job job = { .test_hook = "hang_after_result" };
    worker_run r;
    run_job("verifetch-worker-testhooks", &job, &r, true);
    cr_assert_eq(r.decode_err, VF_IPC_OK);
    cr_assert_str_eq((char *)r.res.text, "confined page");
    const uint32_t want = VF_LAYER_RLIMITS | VF_LAYER_UID | VF_LAYER_USERNS | VF_LAYER_NETNS |
                          VF_LAYER_IPCNS | VF_LAYER_MNTNS | VF_LAYER_LANDLOCK | VF_LAYER_NNP |
                          VF_LAYER_SECCOMP;
    cr_assert_eq(r.res.layers, want, "layers 0x%x", r.res.layers);
    static const char *const spaces[] = { "user", "net", "ipc", "mnt" };
    for (size_t i = 0; i < 4; i++)
        cr_assert_not(shares_ns(r.pid, spaces[i]), "exec'd worker shares our %s namespace", spaces[i]);
    cr_assert(shares_ns(r.pid, "pid"), "an exec'd worker gets no pid namespace (that takes a fork)");
    char path[64], status[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)r.pid);
    FILE *f = fopen(path, "re");
    cr_assert_not_null(f);
    size_t n = fread(status, 1, sizeof status - 1, f);
    fclose(f);
    status[n] = '\0';
    cr_assert(strstr(status, "CapEff:\t0000000000000000\n"), "capabilities left: %s", status);
    cr_assert(strstr(status, "Seccomp:\t2\n"));
    kill(r.pid, SIGKILL);
    waitpid(r.pid, NULL, 0);
    close(r.ipc);
    worker_run_free(&r);
}

Test(worker_confine, exec_worker_refuses_a_requirement_it_cannot_meet)
{
    vf_job job = { .required_layers = VF_LAYER_PIDNS };
    worker_run r;
    run_job("verifetch-worker", &job, &r, false);
    cr_assert_eq(r.decode_err, VF_IPC_OK);
    cr_assert_str_eq(r.res.transport_error, "internal");
    cr_assert_str_eq(r.res.detail, "required confinement not applied: pidns");
    cr_assert_eq(r.res.text_len, 0, "no page from a refusing worker");
    worker_run_free(&r);
}

/* One instruction: allow everything. */
static const struct sock_filter allow_all[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };

Test(worker_confine, the_program_in_the_job_is_the_one_loaded)
{
    /* Were the worker to load its own allowlist, socket() would kill it. */
    uint8_t *prog = malloc(sizeof allow_all);
    memcpy(prog, allow_all, sizeof allow_all);
    vf_job job = { .test_hook = "socket_after_confine", .bpf = prog, .bpf_len = sizeof allow_all };
    worker_run r;
    run_job("verifetch-worker-testhooks", &job, &r, false);
    cr_assert_eq(r.decode_err, VF_IPC_OK, "worker did not answer (status %#x)", r.wstatus);
    cr_assert_str_eq(r.res.detail, "test hook 'socket_after_confine' was not stopped");
    worker_run_free(&r);
    free(prog);
}

Test(worker_confine, the_exported_allowlist_kills_forbidden_calls)
{
    void *prog;
    size_t len;
    char err[256];
    cr_assert_eq(vf_seccomp_export(VF_SECCOMP_AFTER_JOB, &prog, &len, err, sizeof err), 0, "%s", err);
    cr_assert_eq(len % sizeof(struct sock_filter), 0);
    vf_job job = { .test_hook = "socket_after_confine", .bpf = prog, .bpf_len = len };
    worker_run r;
    run_job("verifetch-worker-testhooks", &job, &r, false);
    cr_assert(WIFSIGNALED(r.wstatus) && WTERMSIG(r.wstatus) == SIGSYS, "status %#x", r.wstatus);
    worker_run_free(&r);

    job.test_hook = NULL;
    run_job("verifetch-worker", &job, &r, false);
    cr_assert_eq(r.decode_err, VF_IPC_OK);
    cr_assert_str_eq((char *)r.res.text, "confined page", "the exported program lets a fetch work");
    worker_run_free(&r);
    free(prog);
}

/* Each hook, run under the after-job allowlist prog, dies by SIGSYS. */
static void each_dies_by_sigsys(char *const *hooks, size_t n, void *prog, size_t len)
{
    worker_run r;
    for (size_t i = 0; i < n; i++) {
        vf_job job = { .test_hook = hooks[i], .bpf = prog, .bpf_len = len };
        run_job("verifetch-worker-testhooks", &job, &r, false);
        cr_assert(WIFSIGNALED(r.wstatus) && WTERMSIG(r.wstatus) == SIGSYS, "%s: status %#x",
                  hooks[i], r.wstatus);
        worker_run_free(&r);
    }
}

/* The worker lowers its own priority once its result is sent; the allowlist
 * lets it do that to itself only. */
Test(worker_confine, the_allowlist_lets_a_worker_renice_only_itself)
{
    void *prog;
    size_t len;
    char err[256];
    cr_assert_eq(vf_seccomp_export(VF_SECCOMP_AFTER_JOB, &prog, &len, err, sizeof err), 0, "%s", err);
    static char *const forbidden[] = { "renice_group", "renice_pid1" };
    worker_run r;
    each_dies_by_sigsys(forbidden, 2, prog, len);
    /* Its own renice after the result: it ends normally, not by SIGSYS. */
    vf_job job = { .bpf = prog, .bpf_len = len };
    run_job("verifetch-worker", &job, &r, false);
    cr_assert_eq(r.decode_err, VF_IPC_OK);
    cr_assert(WIFEXITED(r.wstatus) && WEXITSTATUS(r.wstatus) == 0, "status %#x", r.wstatus);
    worker_run_free(&r);
    free(prog);
}

/* Large buffers ask for huge pages (worker/content/page_map.c); the
 * allowlist admits that one madvise advice and no other. */
Test(worker_confine, the_allowlist_admits_only_the_huge_page_advice)
{
#ifdef VF_UNDER_ASAN
    cr_skip_test("sanitizer builds allow every madvise (their shadow memory)");
#endif
    void *prog;
    size_t len;
    char err[256];
    cr_assert_eq(vf_seccomp_export(VF_SECCOMP_AFTER_JOB, &prog, &len, err, sizeof err), 0, "%s", err);
    static char *const forbidden[] = { "madvise_dontneed", "madvise_mergeable" };
    worker_run r;
    each_dies_by_sigsys(forbidden, 2, prog, len);
    vf_job job = { .test_hook = "madvise_hugepage", .bpf = prog, .bpf_len = len };
    run_job("verifetch-worker-testhooks", &job, &r, false);
    cr_assert_eq(r.decode_err, VF_IPC_OK);
    cr_assert(WIFEXITED(r.wstatus) && WEXITSTATUS(r.wstatus) == 0, "status %#x", r.wstatus);
    worker_run_free(&r);
    free(prog);
}

Test(worker_confine, a_program_the_kernel_rejects_fails_confinement)
{
    static const struct sock_filter bogus[] = { BPF_STMT(0xffff, 0) };
    uint8_t *prog = malloc(sizeof bogus);
    memcpy(prog, bogus, sizeof bogus);
    vf_job job = { .bpf = prog, .bpf_len = sizeof bogus };
    worker_run r;
    run_job("verifetch-worker", &job, &r, false);
    cr_assert_eq(r.decode_err, VF_IPC_OK);
    cr_assert_str_eq(r.res.transport_error, "internal");
    cr_assert_str_eq(r.res.detail, "confinement failed: prctl(PR_SET_SECCOMP): Invalid argument");
    cr_assert_not(r.res.layers & VF_LAYER_SECCOMP);
    worker_run_free(&r);
    free(prog);
}

Test(worker_confine, loader_checks_length_and_alignment)
{
    static _Alignas(8) uint8_t buf[3 * sizeof(struct sock_filter)];
    cr_assert(vf_seccomp_program_ok(buf, sizeof(struct sock_filter)));
    cr_assert(vf_seccomp_program_ok(buf, sizeof buf));
    cr_assert_not(vf_seccomp_program_ok(buf, 0));
    cr_assert_not(vf_seccomp_program_ok(NULL, 8));
    cr_assert_not(vf_seccomp_program_ok(buf, 7));
    cr_assert_not(vf_seccomp_program_ok(buf, 12));
    cr_assert_not(vf_seccomp_program_ok(buf + 1, 8), "misaligned");
    cr_assert_not(vf_seccomp_program_ok(buf, (BPF_MAXINSNS + 1) * sizeof(struct sock_filter)));
    char err[256];
    cr_assert_eq(vf_seccomp_load(buf + 1, 8, err, sizeof err), -1);
    cr_assert(strstr(err, "seccomp program rejected"), "%s", err);
}
