#include "worker/sandbox/confine.h"
#include "worker/sandbox/sanitizer.h"
#include "ipc/ipc_messages.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>


/* Enough for fd 0-3, the passed socket and the system libcurl's wakeup socketpair. */
#define VF_WORKER_NOFILE 16

static int fail(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s: %s", what, strerror(errno));
    return -1;
}

int vf_close_inherited_fds(char *err, size_t errlen)
{
    if (close_range(VF_WORKER_IPC_FD + 1, ~0u, 0) != 0)
        return fail(err, errlen, "close_range");
    return 0;
}

static int set_limit(int resource, rlim_t soft, rlim_t hard)
{
    struct rlimit rl = { .rlim_cur = soft, .rlim_max = hard };
    return setrlimit(resource, &rl);
}

int vf_apply_fixed_rlimits(char *err, size_t errlen)
{
    if (set_limit(RLIMIT_NOFILE, VF_WORKER_NOFILE, VF_WORKER_NOFILE) != 0)
        return fail(err, errlen, "setrlimit(RLIMIT_NOFILE)");
    if (set_limit(RLIMIT_FSIZE, 0, 0) != 0)
        return fail(err, errlen, "setrlimit(RLIMIT_FSIZE)");
    if (set_limit(RLIMIT_NPROC, 0, 0) != 0)
        return fail(err, errlen, "setrlimit(RLIMIT_NPROC)");
    if (set_limit(RLIMIT_CORE, 0, 0) != 0)
        return fail(err, errlen, "setrlimit(RLIMIT_CORE)");
    return 0;
}

/* Soft and hard alike: once set, not even the worker itself can raise them. */
int vf_apply_job_rlimits(uint32_t timeout_ms, uint64_t max_body, char *err, size_t errlen)
{
#ifndef VF_UNDER_ASAN
    rlim_t as = (rlim_t)vf_worker_as_bytes(max_body);
    struct rlimit inherited;
    /* Raising above the inherited hard limit is refused (EPERM): clamp. */
    if (getrlimit(RLIMIT_AS, &inherited) == 0 && inherited.rlim_max != RLIM_INFINITY && as > inherited.rlim_max)
        as = inherited.rlim_max;
    if (set_limit(RLIMIT_AS, as, as) != 0)
        return fail(err, errlen, "setrlimit(RLIMIT_AS)");
#else
    (void)max_body;
#endif
    /* The broker kills on wall-clock time; this catches a spinning parser even
     * if the broker is slow to notice. SIGXCPU at soft, SIGKILL at hard. */
    rlim_t cpu = (rlim_t)(timeout_ms / 1000u) + 2;
    if (set_limit(RLIMIT_CPU, cpu, cpu + 1) != 0)
        return fail(err, errlen, "setrlimit(RLIMIT_CPU)");
    return 0;
}

int vf_drop_ids(uid_t uid, gid_t gid, bool groups_may_be_refused, const char *regained, char *err,
                size_t errlen)
{
    /* Inside a user namespace that denies setgroups, there were none to keep
     * (getgroups checks it below). */
    if (setgroups(0, NULL) != 0 && !(groups_may_be_refused && errno == EPERM))
        return fail(err, errlen, "setgroups");
    if (setresgid(gid, gid, gid) != 0)
        return fail(err, errlen, "setresgid");
    if (setresuid(uid, uid, uid) != 0)
        return fail(err, errlen, "setresuid");
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0)
        return fail(err, errlen, "getresuid");
    if (ru != uid || eu != uid || su != uid || rg != gid || eg != gid || sg != gid ||
        getgroups(0, NULL) != 0) {
        snprintf(err, errlen, "uid/gid drop did not stick%s",
                 groups_may_be_refused ? " (supplementary groups left?)" : "");
        return -1;
    }
    if (setresuid(0, 0, 0) == 0) {
        snprintf(err, errlen, "%s could be regained after the drop", regained);
        return -1;
    }
    return 0;
}

int vf_drop_root(char *err, size_t errlen)
{
    if (geteuid() != 0 && getuid() != 0)
        return 0;
    return vf_drop_ids(VF_WORKER_NOBODY, VF_WORKER_NOBODY, false, "root", err, errlen);
}

int vf_set_no_new_privs(char *err, size_t errlen)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return fail(err, errlen, "prctl(PR_SET_NO_NEW_PRIVS)");
    return 0;
}

bool vf_drop_capabilities(void)
{
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3];
    memset(none, 0, sizeof none);
    return syscall(SYS_capset, &hdr, none) == 0;
}
