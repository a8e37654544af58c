#include "broker/spawn/subuid_map.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/ipc_messages.h"

static int userns_fd = -1;
static uid_t mapped_uid;

static const char *const helper_dirs[] = { "/usr/bin", "/usr/sbin", "/bin", "/sbin", NULL };

static bool find_helper(const char *name, char *out, size_t len)
{
    for (size_t i = 0; helper_dirs[i]; i++) {
        snprintf(out, len, "%s/%s", helper_dirs[i], name);
        if (access(out, X_OK) == 0)
            return true;
    }
    return false;
}

/* The first range of at least one id that file gives to user (by name or
 * number, as newuidmap matches it). */
static bool find_range(const char *file, const char *user, unsigned long id, unsigned long *start)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return false;
    char line[512], num[24];
    snprintf(num, sizeof num, "%lu", id);
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        char *owner = strtok(line, ":\n"), *from = strtok(NULL, ":\n"), *count = strtok(NULL, ":\n");
        if (!owner || !from || !count || (strcmp(owner, user) != 0 && strcmp(owner, num) != 0))
            continue;
        char *end1, *end2;
        unsigned long s = strtoul(from, &end1, 10), n = strtoul(count, &end2, 10);
        if (*end1 || *end2 || n == 0 || s == 0 || s > 0xfffffffeul)
            continue;
        *start = s;
        found = true;
    }
    fclose(f);
    return found;
}

/* Runs a map helper for pid ("0 <own> 1 1 <sub> 1"), its stderr kept in why. */
static int run_map_helper(const char *path, pid_t pid, unsigned long own, unsigned long sub, char *why,
                          size_t len)
{
    char a_pid[24], a_own[24], a_sub[24], a_inside[24];
    snprintf(a_pid, sizeof a_pid, "%d", (int)pid);
    snprintf(a_own, sizeof a_own, "%lu", own);
    snprintf(a_sub, sizeof a_sub, "%lu", sub);
    snprintf(a_inside, sizeof a_inside, "%u", VF_WORKER_MAPPED_ID);
    char *argv[] = { (char *)path, a_pid, (char *)"0", a_own, (char *)"1", a_inside, a_sub, (char *)"1", NULL };
    char *envp[] = { NULL };
    int errp[2];
    if (pipe2(errp, O_CLOEXEC) != 0) {
        snprintf(why, len, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    pid_t helper;
    int rc = posix_spawn(&helper, path, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    close(errp[1]);
    if (rc != 0) {
        close(errp[0]);
        snprintf(why, len, "%s: %s", path, strerror(rc));
        return -1;
    }
    char said[200] = "";
    ssize_t n = read(errp[0], said, sizeof said - 1);
    said[n > 0 ? n : 0] = '\0';
    said[strcspn(said, "\n")] = '\0';
    close(errp[0]);
    int st = 0;
    while (waitpid(helper, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    snprintf(why, len, "%s failed: %.200s", path, said[0] ? said : "no message");
    return -1;
}

/* A child in a new user namespace that only waits: mapped from outside, its
 * namespace is kept by a descriptor once the child has gone. */
static int make_namespace(const char *uidmap, const char *gidmap, unsigned long sub_uid, unsigned long sub_gid,
                          char *why, size_t len)
{
    int hold[2];
    if (pipe2(hold, O_CLOEXEC) != 0) {
        snprintf(why, len, "pipe: %s", strerror(errno));
        return -1;
    }
    long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
    if (pid == 0) {
        char c;
        close(hold[1]);
        while (read(hold[0], &c, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(hold[0]);
    if (pid < 0) {
        snprintf(why, len, "a new user namespace was refused: %s", strerror(errno));
        close(hold[1]);
        return -1;
    }
    int fd = -1;
    if (run_map_helper(uidmap, (pid_t)pid, (unsigned long)geteuid(), sub_uid, why, len) == 0 &&
        run_map_helper(gidmap, (pid_t)pid, (unsigned long)getegid(), sub_gid, why, len) == 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/ns/user", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            snprintf(why, len, "%s: %s", path, strerror(errno));
    }
    close(hold[1]);
    while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return fd;
}

void vf_subuid_setup(bool enabled, vf_subuid_status *out)
{
    memset(out, 0, sizeof *out);
    uid_t uid = geteuid();
    if (uid == 0) {
        snprintf(out->detail, sizeof out->detail, "the broker is root: workers drop to uid %u", VF_WORKER_NOBODY);
        return;
    }
    if (!enabled) {
        snprintf(out->detail, sizeof out->detail, "worker.subordinate_uid = \"off\"");
        return;
    }
    if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1) {
        /* The kernel lets an unprivileged process map only its own uid; the
         * setuid helpers would map more, but gain nothing under no_new_privs. */
        snprintf(out->detail, sizeof out->detail, "the broker runs with no_new_privs (systemd NoNewPrivileges=, "
                 "k8s allowPrivilegeEscalation: false), under which newuidmap cannot map a subordinate uid");
        return;
    }
    char uidmap[64], gidmap[64];
    if (!find_helper("newuidmap", uidmap, sizeof uidmap) || !find_helper("newgidmap", gidmap, sizeof gidmap)) {
        snprintf(out->detail, sizeof out->detail, "newuidmap/newgidmap not found: install package uidmap");
        return;
    }
    struct passwd *pw = getpwuid(uid);
    if (!pw) {
        snprintf(out->detail, sizeof out->detail, "uid %u has no user name, which newuidmap needs",
                 (unsigned)uid);
        return;
    }
    unsigned long sub_uid = 0, sub_gid = 0;
    if (!find_range("/etc/subuid", pw->pw_name, (unsigned long)uid, &sub_uid) ||
        !find_range("/etc/subgid", pw->pw_name, (unsigned long)uid, &sub_gid)) {
        snprintf(out->detail, sizeof out->detail, "no range for user %.64s in /etc/subuid and /etc/subgid",
                 pw->pw_name);
        return;
    }
    int fd = make_namespace(uidmap, gidmap, sub_uid, sub_gid, out->detail, sizeof out->detail);
    if (fd < 0)
        return;
    /* Clear of the low numbers a spawn places descriptors at. */
    userns_fd = fcntl(fd, F_DUPFD_CLOEXEC, 16);
    close(fd);
    if (userns_fd < 0) {
        snprintf(out->detail, sizeof out->detail, "namespace descriptor: %s", strerror(errno));
        return;
    }
    mapped_uid = (uid_t)sub_uid;
    out->active = true;
    out->worker_uid = (uid_t)sub_uid;
    out->worker_gid = (gid_t)sub_gid;
}

int vf_subuid_userns_fd(void)
{
    return userns_fd;
}

bool vf_subuid_worker_uid(uid_t *uid)
{
    if (userns_fd < 0)
        return false;
    *uid = mapped_uid;
    return true;
}
