#include "worker/sandbox/namespaces.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/ipc_messages.h"

#define NS_ALL (CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWNS)

uint32_t vf_ns_layers(unsigned long f)
{
    uint32_t l = 0;
    if (f & CLONE_NEWUSER)
        l |= VF_LAYER_USERNS;
    if (f & CLONE_NEWPID)
        l |= VF_LAYER_PIDNS;
    if (f & CLONE_NEWNET)
        l |= VF_LAYER_NETNS;
    if (f & CLONE_NEWIPC)
        l |= VF_LAYER_IPCNS;
    if (f & CLONE_NEWNS)
        l |= VF_LAYER_MNTNS;
    return l;
}

/* Tried in order, best first. Without a user namespace only a privileged
 * process gets the others; a host may refuse a network namespace alone
 * (container runtimes often do). */
static const unsigned long candidates[] = {
    NS_ALL,
    NS_ALL & ~CLONE_NEWUSER,
    NS_ALL & ~CLONE_NEWNET,
    CLONE_NEWUSER | CLONE_NEWNET,
    CLONE_NEWUSER,
};

uint32_t vf_ns_unshare(bool new_user)
{
    unsigned long drop = CLONE_NEWPID | (new_user ? 0 : CLONE_NEWUSER);
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        unsigned long f = candidates[i] & ~drop;
        if (f && unshare((int)f) == 0)
            return vf_ns_layers(f);
    }
    return 0;
}

long vf_ns_clone(unsigned long clone_flags)
{
    return syscall(SYS_clone, clone_flags | SIGCHLD, NULL, NULL, NULL, 0);
}

static int try_clone(unsigned long f)
{
    long pid = vf_ns_clone(f);
    if (pid == 0)
        _exit(0);
    if (pid < 0)
        return -1;
    int st = 0;
    while (waitpid((pid_t)pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

unsigned long vf_ns_probe_clone_flags(unsigned long wanted)
{
    unsigned long tried[sizeof candidates / sizeof candidates[0]];
    size_t n_tried = 0;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        unsigned long f = candidates[i] & wanted;
        bool seen = f == 0;
        for (size_t k = 0; k < n_tried; k++)
            seen = seen || tried[k] == f;
        if (seen)
            continue;
        tried[n_tried++] = f;
        if (try_clone(f) == 0)
            return f;
    }
    return 0;
}
