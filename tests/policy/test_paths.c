/* Default socket and worker paths. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "config_fixture.h"
#include "policy/config.h"

TestSuite(paths, .init = fx_setup, .fini = fx_teardown);

static void expect_socket_path(const char *want)
{
    char *got = vf_default_socket_path();
    cr_assert_not_null(got);
    cr_expect_str_eq(got, want);
    free(got);
}

Test(paths, socket_path_for_root_and_users)
{
    if (geteuid() == 0) {
        setenv("XDG_RUNTIME_DIR", "/run/user/0", 1);
        expect_socket_path("/run/verifetch/verifetch.sock");
        /* Criterion runs each test in its own process, so dropping the euid is contained. */
        cr_assert_eq(seteuid(65534), 0);
    }
    char want[256];
    unsigned uid = (unsigned)geteuid();

    setenv("XDG_RUNTIME_DIR", "/run/user/4242", 1);
    expect_socket_path("/run/user/4242/verifetch.sock");

    unsetenv("XDG_RUNTIME_DIR");
    snprintf(want, sizeof want, "/tmp/verifetch-%u/verifetch.sock", uid);
    expect_socket_path(want);

    setenv("XDG_RUNTIME_DIR", "relative/dir", 1);
    expect_socket_path(want);

    char longdir[200];
    memset(longdir, 'd', sizeof longdir - 1);
    longdir[0] = '/';
    longdir[sizeof longdir - 1] = '\0';
    setenv("XDG_RUNTIME_DIR", longdir, 1);
    expect_socket_path(want);   /* would not fit in sun_path */

    /* Back to root so sanitizer exit checks can read this process. */
    if (getuid() == 0)
        cr_assert_eq(seteuid(0), 0);
}

static char *run_helper(const char *exe)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(exe, exe, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    static char out[PATH_MAX + 2];
    ssize_t n = read(fds[0], out, sizeof out - 1);
    close(fds[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "helper failed");
    cr_assert_gt(n, 0);
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return out;
}

static void copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    cr_assert_geq(in, 0, "cannot open %s", from);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    cr_assert_geq(out, 0);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        cr_assert_eq(write(out, buf, (size_t)n), n);
    close(in);
    close(out);
}

Test(paths, worker_path_build_tree_then_libexec)
{
    const char *build = getenv("VERIFETCH_BUILD_ROOT");
    cr_assert_not_null(build, "VERIFETCH_BUILD_ROOT not set (run through meson test)");
    char helper[PATH_MAX], bin[PATH_MAX], exe[PATH_MAX], worker_dir[PATH_MAX], worker[PATH_MAX];
    snprintf(helper, sizeof helper, "%s/tests/policy/vf_print_worker_path", build);
    snprintf(bin, sizeof bin, "%s/bin", fx_dir);
    snprintf(exe, sizeof exe, "%s/bin/helper", fx_dir);
    snprintf(worker_dir, sizeof worker_dir, "%s/worker", fx_dir);
    snprintf(worker, sizeof worker, "%s/worker/verifetch-worker", fx_dir);
    cr_assert_eq(mkdir(bin, 0755), 0);
    copy_file(helper, exe);

    /* No worker next to the binary: the installed path. */
    cr_assert_str_eq(run_helper(exe), VF_TEST_LIBEXECDIR "/verifetch/verifetch-worker");

    /* An executable ../worker/verifetch-worker: that one, canonicalised. */
    cr_assert_eq(mkdir(worker_dir, 0755), 0);
    int fd = open(worker, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
    cr_assert_geq(fd, 0);
    close(fd);
    char real_worker[PATH_MAX];
    cr_assert_not_null(realpath(worker, real_worker));
    cr_assert_str_eq(run_helper(exe), real_worker);

    /* Present but not executable: ignored. */
    cr_assert_eq(chmod(worker, 0644), 0);
    cr_assert_str_eq(run_helper(exe), VF_TEST_LIBEXECDIR "/verifetch/verifetch-worker");
}
