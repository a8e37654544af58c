/* Misbehaviours on demand, so tests can prove the filter and the broker's
 * handling of a broken worker. Compiled only into verifetch-worker-testhooks
 * (VF_WORKER_TEST_HOOKS); the production worker refuses any job with a hook. */
#ifndef VERIFETCH_WORKER_TEST_HOOKS_H
#define VERIFETCH_WORKER_TEST_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    VF_HOOK_NONE = 0,
    VF_HOOK_SOCKET_AFTER_CONFINE, /* socket(): must die by SIGSYS */
    VF_HOOK_OPEN_AFTER_CONFINE,   /* open("/etc/passwd"): must die by SIGSYS */
    VF_HOOK_FORK_BOMB,            /* fork(): must die by SIGSYS */
    VF_HOOK_SENDTO_STDERR,        /* forged JSON sendto() fd 2 (a journal socket): must die by SIGSYS */
    VF_HOOK_SENDTO_OTHER_FD,      /* sendto() on a socketpair of its own: must die by SIGSYS */
    VF_HOOK_PRLIMIT_AFTER_JOB,    /* prlimit64() once the job is in: must die by SIGSYS */
    VF_HOOK_RECVMSG_AFTER_JOB,    /* recvmsg() on the IPC socket once the job is in: must die by SIGSYS */
    VF_HOOK_HANG,                 /* block forever after confinement */
    VF_HOOK_CRASH,                /* SIGSEGV */
    VF_HOOK_ALLOC_BOMB,           /* allocate until refused, exit nonzero */
    VF_HOOK_GARBAGE_RESULT,       /* a frame that is not msgpack */
    VF_HOOK_OVERSIZED_FRAME,      /* a 1 GiB length prefix */
    VF_HOOK_TRAILING_BYTES,       /* a valid result followed by junk in the frame */
    VF_HOOK_HANG_AFTER_RESULT,    /* fetch, answer, then block forever */
    VF_HOOK_REPORT_RANDOM,        /* fetch, answer with 16 fresh random bytes as detail */
    VF_HOOK_REPORT_CANARY,        /* fetch, answer with the stack canary (hex) as detail */
    VF_HOOK_OPEN_AFTER_LANDLOCK,  /* open() between Landlock and seccomp; errno as detail */
    VF_HOOK_RENICE_GROUP,         /* setpriority() on its process group: must die by SIGSYS */
    VF_HOOK_RENICE_PID1,          /* setpriority() on pid 1: must die by SIGSYS */
    VF_HOOK_MADVISE_DONTNEED,     /* madvise(MADV_DONTNEED) on its own heap: must die by SIGSYS */
    VF_HOOK_MADVISE_MERGEABLE,    /* madvise(MADV_MERGEABLE) (KSM) on its own heap: must die by SIGSYS */
    VF_HOOK_MADVISE_HUGEPAGE,     /* madvise(MADV_HUGEPAGE) on its own mapping, then fetch normally */
    VF_HOOK_REPORT_TLS_CTX,       /* fetch, answer with the TLS client contexts made and taken as detail */
    VF_HOOK_REPORT_REHEARSED,     /* fetch, answer "rehearsed=1" or "=0": did this pool worker rehearse a job */
} vf_hook;

/* VF_HOOK_NONE for NULL; false for a name this build does not know. */
bool vf_hook_parse(const char *name, vf_hook *out);

/* Runs right after the seccomp filter is loaded. Returns only for hooks that
 * act later (or when a forbidden call was unexpectedly allowed: then it
 * returns and main reports that). */
void vf_hook_after_confine(vf_hook hook);

/* Replaces sending the encoded result frame; true when the hook sent something
 * itself. */
bool vf_hook_send(vf_hook hook, int ipc_fd, const void *frame, size_t len);

/* VF_HOOK_OPEN_AFTER_LANDLOCK: tries to open a world-readable file and
 * describes what happened ("open /etc/passwd: Permission denied"). */
void vf_hook_probe_open(char *out, size_t len);

/* Runs after the result frame went out. */
void vf_hook_after_result(vf_hook hook);

#endif
