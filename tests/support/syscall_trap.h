/* Counts a code path's calls to one system call without running them: on a
 * thread of its own, a seccomp filter traps the call (SIGSYS), the handler
 * counts it and makes it fail with ENOSYS. For asserting that a path makes no
 * such call at all. The filter stays on that thread (and threads it starts)
 * only, so the test runner's own calls are untouched.
 * x86_64 only: elsewhere syscall_trap_run returns -1 and tests skip. */
#ifndef VERIFETCH_TESTS_SYSCALL_TRAP_H
#define VERIFETCH_TESTS_SYSCALL_TRAP_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ucontext.h>

#if defined(__x86_64__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#endif

static volatile sig_atomic_t syscall_trapped;

#if defined(__x86_64__)
static void syscall_trap_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    syscall_trapped++;
    ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}
#endif

static inline int syscall_trap_install(int nr)
{
#if defined(__x86_64__)
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = syscall_trap_handler;
    sa.sa_flags = SA_SIGINFO;
    sigset_t sys;
    sigemptyset(&sys);
    sigaddset(&sys, SIGSYS);
    if (sigaction(SIGSYS, &sa, NULL) != 0 || pthread_sigmask(SIG_UNBLOCK, &sys, NULL) != 0)
        return -1;
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = sizeof f / sizeof f[0], .filter = f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return -1;
    return 0;
#else
    (void)nr;
    return -1;
#endif
}

typedef struct {
    int nr;
    void (*fn)(void *);
    void *arg;
    int rc;
} syscall_trap_job;

static void *syscall_trap_thread(void *p)
{
    syscall_trap_job *j = p;
    j->rc = syscall_trap_install(j->nr);
    if (j->rc == 0)
        j->fn(j->arg);
    return NULL;
}

/* Runs fn(arg) on a new thread that traps system call nr. How many times fn
 * (and threads it started) made that call, or -1 when no filter could be set. */
static inline int syscall_trap_run(int nr, void (*fn)(void *), void *arg)
{
    syscall_trap_job j = { .nr = nr, .fn = fn, .arg = arg, .rc = -1 };
    pthread_t t;
    syscall_trapped = 0;
    if (pthread_create(&t, NULL, syscall_trap_thread, &j) != 0)
        return -1;
    pthread_join(t, NULL);
    return j.rc == 0 ? (int)syscall_trapped : -1;
}

#endif
