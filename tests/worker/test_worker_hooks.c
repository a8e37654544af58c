/* The test-hook worker misbehaving on purpose: forbidden calls must die by
 * SIGSYS under the real filter, broken answers must look broken to the reader,
 * and the production worker must refuse hooks altogether. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define WAIT_MS 15000

static const char *page_response(size_t *len)
{
    static char *resp;
    static size_t resp_len;
    if (!resp) {
        const char *body = "<p>hook page</p>";
        resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/html", body,
                             strlen(body), &resp_len);
    }
    *len = resp_len;
    return resp;
}

static void run_hook(const char *exe_name, const char *hook, int wait_ms, worker_run *r)
{
    test_origin o;
    memset(&o, 0, sizeof o);
    o.response = page_response(&o.response_len);
    origin_start(&o);
    char url[128];
    snprintf(url, sizeof url, "http://origin.test:%u/", o.port);
    vf_job job = basic_job(url);
    job.test_hook = (char *)hook;
    /* The origin finishes when the worker's copy of the socket closes. */
    run_worker(worker_path(exe_name), &job, origin_connect(&o), wait_ms, r);
    origin_stop(&o);
}

static void expect_sigsys(const char *hook)
{
    worker_run r;
    run_hook("verifetch-worker-testhooks", hook, WAIT_MS, &r);
    cr_assert(WIFSIGNALED(r.wstatus), "%s: worker was not killed (exit %d)", hook,
              WIFEXITED(r.wstatus) ? WEXITSTATUS(r.wstatus) : -1);
    cr_assert_eq(WTERMSIG(r.wstatus), SIGSYS, "%s: killed by signal %d", hook,
                 WTERMSIG(r.wstatus));
    cr_assert_not(r.got_frame, "%s: a result was sent", hook);
    worker_run_free(&r);
}

Test(worker_hooks, socket_after_confine_dies_by_sigsys) { expect_sigsys("socket_after_confine"); }
Test(worker_hooks, open_after_confine_dies_by_sigsys) { expect_sigsys("open_after_confine"); }
Test(worker_hooks, fork_bomb_dies_by_sigsys) { expect_sigsys("fork_bomb"); }
Test(worker_hooks, sendto_another_fd_dies_by_sigsys) { expect_sigsys("sendto_other_fd"); }

/* Issue 13 item 7: with fd 2 a stream socket, as journald gives a service,
 * a confined worker's sendto() there dies by SIGSYS and no forged line
 * reaches the log. */
Test(worker_hooks, sendto_a_journal_socket_on_fd2_dies_by_sigsys)
{
    int journal[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, journal), 0);
    int saved = dup(2);
    cr_assert(saved >= 0 && dup2(journal[1], 2) == 2);
    worker_run r;
    run_hook("verifetch-worker-testhooks", "sendto_stderr", WAIT_MS, &r);
    dup2(saved, 2);
    close(saved);
    close(journal[1]);
    char got[256] = "";
    ssize_t n = recv(journal[0], got, sizeof got - 1, MSG_DONTWAIT);
    close(journal[0]);
    cr_assert(n <= 0 || !strstr(got, "forged"), "a forged line reached fd 2: %s", got);
    cr_assert(WIFSIGNALED(r.wstatus) && WTERMSIG(r.wstatus) == SIGSYS, "worker was not killed by SIGSYS");
    cr_assert_not(r.got_frame);
    worker_run_free(&r);
}

Test(worker_hooks, no_hook_fetches_normally)
{
    worker_run r;
    run_hook("verifetch-worker-testhooks", NULL, WAIT_MS, &r);
    cr_assert(WIFEXITED(r.wstatus) && WEXITSTATUS(r.wstatus) == 0);
    cr_assert_eq(r.decode_err, VF_IPC_OK);
    cr_assert_str_eq((char *)r.res.text, "hook page");
    worker_run_free(&r);
}

Test(worker_hooks, production_worker_refuses_hooks)
{
    worker_run r;
    run_hook("verifetch-worker", "socket_after_confine", WAIT_MS, &r);
    cr_assert(WIFEXITED(r.wstatus) && WEXITSTATUS(r.wstatus) == 0);
    cr_assert_eq(r.decode_err, VF_IPC_OK);
    cr_assert_str_eq(r.res.transport_error, "internal");
    cr_assert_str_eq(r.res.detail, "test hooks not built");
    worker_run_free(&r);
}

Test(worker_hooks, unknown_hook_is_refused)
{
    worker_run r;
    run_hook("verifetch-worker-testhooks", "no_such_hook", WAIT_MS, &r);
    cr_assert_eq(r.decode_err, VF_IPC_OK);
    cr_assert_str_eq(r.res.transport_error, "internal");
    cr_assert_str_eq(r.res.detail, "unknown test hook 'no_such_hook'");
    worker_run_free(&r);
}

Test(worker_hooks, crash_dies_by_sigsegv)
{
    worker_run r;
    run_hook("verifetch-worker-testhooks", "crash", WAIT_MS, &r);
    cr_assert(WIFSIGNALED(r.wstatus));
    cr_assert_eq(WTERMSIG(r.wstatus), SIGSEGV);
    worker_run_free(&r);
}

Test(worker_hooks, hang_is_still_running_when_killed)
{
    worker_run r;
    run_hook("verifetch-worker-testhooks", "hang", 500, &r);
    cr_assert_eq(r.recv_err, VF_IPC_ERR_TIMEOUT);
    cr_assert(WIFSIGNALED(r.wstatus));
    cr_assert_eq(WTERMSIG(r.wstatus), SIGKILL, "it should have needed our SIGKILL");
    worker_run_free(&r);
}

Test(worker_hooks, alloc_bomb_exits_nonzero)
{
    worker_run r;
    run_hook("verifetch-worker-testhooks", "alloc_bomb", WAIT_MS, &r);
    cr_assert_not(r.got_frame);
    /* Refused allocations end in exit(3); ASan may instead abort on the refusal. */
    cr_assert((WIFEXITED(r.wstatus) && WEXITSTATUS(r.wstatus) != 0) ||
                  (WIFSIGNALED(r.wstatus) && WTERMSIG(r.wstatus) != SIGKILL),
              "status %#x", r.wstatus);
    worker_run_free(&r);
}

Test(worker_hooks, garbage_result_is_not_msgpack)
{
    worker_run r;
    run_hook("verifetch-worker-testhooks", "garbage_result", WAIT_MS, &r);
    cr_assert_eq(r.recv_err, VF_IPC_OK);
    cr_assert_eq(r.decode_err, VF_IPC_ERR_MSGPACK, "%s", vf_ipc_strerror(r.decode_err));
    worker_run_free(&r);
}

Test(worker_hooks, oversized_frame_is_rejected_by_its_prefix)
{
    worker_run r;
    run_hook("verifetch-worker-testhooks", "oversized_frame", WAIT_MS, &r);
    cr_assert_eq(r.recv_err, VF_IPC_ERR_TOO_LARGE, "%s", vf_ipc_strerror(r.recv_err));
    worker_run_free(&r);
}

Test(worker_hooks, trailing_bytes_are_detected)
{
    worker_run r;
    run_hook("verifetch-worker-testhooks", "trailing_bytes", WAIT_MS, &r);
    cr_assert_eq(r.recv_err, VF_IPC_OK);
    cr_assert_eq(r.decode_err, VF_IPC_ERR_TRAILING, "%s", vf_ipc_strerror(r.decode_err));
    worker_run_free(&r);
}

static size_t read_proc(pid_t pid, const char *what, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    int fd = open(path, O_RDONLY);
    cr_assert(fd >= 0, "open %s", path);
    ssize_t n = read(fd, buf, cap);
    close(fd);
    cr_assert(n >= 0);
    return (size_t)n;
}

Test(worker_hooks, hang_after_result_answers_then_stays_alive)
{
    test_origin o;
    memset(&o, 0, sizeof o);
    o.response = page_response(&o.response_len);
    origin_start(&o);
    char url[128];
    snprintf(url, sizeof url, "http://origin.test:%u/", o.port);
    vf_job job = basic_job(url);
    job.test_hook = "hang_after_result";
    worker_run r;
    run_worker_keep_alive(worker_path("verifetch-worker-testhooks"), &job, origin_connect(&o),
                          WAIT_MS, &r);
    origin_stop(&o);
    cr_assert_eq(r.decode_err, VF_IPC_OK);
    cr_assert_str_eq((char *)r.res.text, "hook page");
    cr_assert_eq(waitpid(r.pid, NULL, WNOHANG), 0, "worker exited after answering");
    /* The environment the broker gave is empty and argv is exactly one word. */
    char buf[256];
    cr_assert_eq(read_proc(r.pid, "environ", buf, sizeof buf), 0);
    size_t n = read_proc(r.pid, "cmdline", buf, sizeof buf);
    cr_assert_eq(n, sizeof "verifetch-worker");
    cr_assert_str_eq(buf, "verifetch-worker");
    kill(r.pid, SIGKILL);
    waitpid(r.pid, NULL, 0);
    close(r.ipc);
    worker_run_free(&r);
}
