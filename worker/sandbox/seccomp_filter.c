/* The one place that says which syscalls a worker may make after confinement.
 * Started from the set measured for libcurl HTTP+HTTPS (DESIGN.md) and grown
 * only by what a traced worker needed for gzip/br/zstd, libxml2 and jansson. */
#include "worker/sandbox/seccomp_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "worker/sandbox/confine.h"
#include "worker/sandbox/sanitizer.h"

/* Allowed with any arguments. Every entry was seen in a traced worker
 * (strace -f over the worker integration tests) unless marked otherwise. */
static const int plain_allow[] = {
    SCMP_SYS(recvfrom),      /* recv() on the passed socket: HTTP/TLS bytes in */
    SCMP_SYS(poll),          /* curl waits for readiness; IPC send waits for POLLOUT */
    SCMP_SYS(getsockname),   /* curl records the local address of the connection */
    SCMP_SYS(getpeername),   /* curl records the remote address of the connection */
    SCMP_SYS(getsockopt),    /* curl reads SO_ERROR after "connecting" */
    SCMP_SYS(close),         /* curl closes the passed socket and its wakeup pair */
    SCMP_SYS(brk),           /* malloc: main arena growth */
    SCMP_SYS(munmap),        /* malloc: large blocks returned */
    SCMP_SYS(mremap),        /* realloc of large (mmap'd) blocks: body buffer growth */
    SCMP_SYS(futex),         /* OpenSSL/libcurl once-init and locks (single thread) */
    SCMP_SYS(getpid),        /* OpenSSL's fork detection in its random generator */
    SCMP_SYS(getrandom),     /* OpenSSL DRBG seeding, TLS randoms */
    SCMP_SYS(exit_group),    /* normal exit */
    /* Not seen (the vDSO answers it), allowed so a host without a usable vDSO
     * (valgrind, vdso=0) does not kill every worker on its first timer read. */
    SCMP_SYS(clock_gettime),
#ifdef VF_UNDER_ASAN
    /* ASan/UBSan runtime only (never in production builds). */
    SCMP_SYS(madvise),       /* shadow memory: MADV_NOHUGEPAGE/DONTNEED on mappings */
    SCMP_SYS(sigaltstack),   /* its _exit interceptor takes down the signal stack */
#endif
};

static int add(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned n_args,
               const struct scmp_arg_cmp *args)
{
    return seccomp_rule_add_array(ctx, action, nr, n_args, args);
}

/* tree: libseccomp sorts the calls into a binary tree (runc does the same)
 * instead of testing them one after another. Every worker installs the
 * program, and the kernel then runs it once per call number to fill its
 * allow cache: the tree takes under half the steps over all of them and at
 * most 20 for one verdict (tests/worker/test_seccomp_layout.c; the install
 * time, tests/worker/filter_install.c). */
static scmp_filter_ctx build_filter(vf_seccomp_variant variant, bool tree, char *err, size_t errlen)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (!ctx) {
        snprintf(err, errlen, "seccomp_init failed");
        return NULL;
    }
    int rc = tree ? seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) : 0;
    for (size_t i = 0; rc == 0 && i < sizeof plain_allow / sizeof plain_allow[0]; i++)
        rc = add(ctx, SCMP_ACT_ALLOW, plain_allow[i], 0, NULL);

    /* send() on the passed socket is sendto() without an address; an address
     * would let a datagram reach somewhere else. */
    if (rc == 0)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendto), 1,
                 (struct scmp_arg_cmp[]){ SCMP_A4_64(SCMP_CMP_EQ, 0) });
    /* The result frame goes out on the IPC socket only. */
    if (rc == 0)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), 1,
                 (struct scmp_arg_cmp[]){ SCMP_A0_32(SCMP_CMP_EQ, VF_WORKER_IPC_FD) });
    /* The system libcurl's multi handle makes a wakeup pair (the lean one,
     * packaging/lean_curl.sh, makes none); only a local stream pair. */
    if (rc == 0)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socketpair), 2,
                 (struct scmp_arg_cmp[]){ SCMP_A0_32(SCMP_CMP_EQ, AF_UNIX),
                                          SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xF, SOCK_STREAM) });
    /* curl sets TCP_NODELAY on the connection; nothing else. */
    if (rc == 0)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setsockopt), 2,
                 (struct scmp_arg_cmp[]){ SCMP_A1_32(SCMP_CMP_EQ, IPPROTO_TCP),
                                          SCMP_A2_32(SCMP_CMP_EQ, TCP_NODELAY) });
    /* curl toggles O_NONBLOCK (F_GETFL then F_SETFL); nothing else, so no
     * F_DUPFD and no descriptor games. */
    static const int fcntl_cmds[] = { F_GETFL, F_SETFL };
    for (size_t i = 0; rc == 0 && i < sizeof fcntl_cmds / sizeof fcntl_cmds[0]; i++)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
                 (struct scmp_arg_cmp[]){ SCMP_A1_32(SCMP_CMP_EQ, (unsigned)fcntl_cmds[i]) });
    /* malloc maps memory; never executable, so injected code has nowhere to run. */
    if (rc == 0)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                 (struct scmp_arg_cmp[]){ SCMP_A2_32(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0) });
#ifndef VF_UNDER_ASAN
    /* A large buffer asks for transparent huge pages for its own mapping
     * (content/page_map.c); no other advice. (ASan builds allow madvise.) */
    if (rc == 0)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(madvise), 1,
                 (struct scmp_arg_cmp[]){ SCMP_A2_32(SCMP_CMP_EQ, MADV_HUGEPAGE) });
#endif
    /* libcurl 7.88.1 calls connect() on a socket declared already connected
     * (curl issue #10626, fixed in 8.0.0): pretend it worked. The kernel never
     * runs the call, so nothing new is ever reached. Pinned by
     * tests/worker/test_curl_connect_pin.c. */
    if (rc == 0)
        rc = add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(connect), 0, NULL);
    /* Its own nice value, once its result is sent: its teardown then yields to
     * the broker threads answering on the same CPU. Only for itself, and a
     * process can only lower its own priority without CAP_SYS_NICE. */
    if (rc == 0)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setpriority), 2,
                 (struct scmp_arg_cmp[]){ SCMP_A0_32(SCMP_CMP_EQ, PRIO_PROCESS),
                                          SCMP_A1_32(SCMP_CMP_EQ, 0) });
    if (rc == 0 && variant == VF_SECCOMP_BEFORE_JOB)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(recvmsg), 1,
                 (struct scmp_arg_cmp[]){ SCMP_A0_32(SCMP_CMP_EQ, VF_WORKER_IPC_FD) });
    if (rc == 0 && variant == VF_SECCOMP_BEFORE_JOB)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1,
                 (struct scmp_arg_cmp[]){ SCMP_A0_32(SCMP_CMP_EQ, 0) });
    /* ...and stack the job filter (job_filter.h) once its job is in: a
     * further filter can only take calls away. No flags, so no TSYNC. */
    if (rc == 0 && variant == VF_SECCOMP_BEFORE_JOB)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 2,
                 (struct scmp_arg_cmp[]){ SCMP_A0_32(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER),
                                          SCMP_A1_32(SCMP_CMP_EQ, 0) });
#ifdef VF_UNDER_ASAN
    /* Sanitizer builds: let a report's first lines reach stderr (fd 2 only).
     * Symbolizing it would need files, so the rest dies by SIGSYS. */
    if (rc == 0)
        rc = add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                 (struct scmp_arg_cmp[]){ SCMP_A0_32(SCMP_CMP_EQ, 2) });
#endif

    if (rc != 0) {
        snprintf(err, errlen, "seccomp rule: %s", strerror(-rc));
        seccomp_release(ctx);
        return NULL;
    }
    return ctx;
}

/* The program goes through a pipe, not a file: a worker may export it under
 * RLIMIT_FSIZE 0, and the largest possible program (32 KiB) fits the 64 KiB
 * pipe buffer, so nothing blocks. */
static int export_layout(vf_seccomp_variant variant, bool tree, void **prog, size_t *len, char *err,
                         size_t errlen)
{
    *prog = NULL;
    *len = 0;
    scmp_filter_ctx ctx = build_filter(variant, tree, err, errlen);
    if (!ctx)
        return -1;
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(err, errlen, "pipe2: %s", strerror(errno));
        seccomp_release(ctx);
        return -1;
    }
    int rc = seccomp_export_bpf(ctx, p[1]);
    seccomp_release(ctx);
    close(p[1]);
    const size_t cap = BPF_MAXINSNS * sizeof(struct sock_filter);
    uint8_t *buf = rc == 0 ? malloc(cap + 1) : NULL;
    size_t got = 0;
    while (buf && got <= cap) {
        ssize_t k = read(p[0], buf + got, cap + 1 - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(p[0]);
    if (rc != 0 || !buf || !vf_seccomp_program_ok(buf, got)) {
        snprintf(err, errlen, "seccomp_export_bpf: %s",
                 rc != 0 ? strerror(-rc) : !buf ? "out of memory" : "bad program size");
        free(buf);
        return -1;
    }
    *prog = buf;
    *len = got;
    return 0;
}

int vf_seccomp_export(vf_seccomp_variant variant, void **prog, size_t *len, char *err,
                      size_t errlen)
{
    return export_layout(variant, true, prog, len, err, errlen);
}

int vf_seccomp_export_listed(vf_seccomp_variant variant, void **prog, size_t *len, char *err,
                             size_t errlen)
{
    return export_layout(variant, false, prog, len, err, errlen);
}

bool vf_seccomp_program_ok(const void *prog, size_t len)
{
    return prog != NULL && len > 0 && len % sizeof(struct sock_filter) == 0 &&
           len / sizeof(struct sock_filter) <= BPF_MAXINSNS &&
           (uintptr_t)prog % _Alignof(struct sock_filter) == 0;
}

int vf_seccomp_load(const void *prog, size_t len, char *err, size_t errlen)
{
    if (!vf_seccomp_program_ok(prog, len)) {
        snprintf(err, errlen, "seccomp program rejected: %zu bytes is not a whole, aligned "
                 "program of 1..%d instructions", len, BPF_MAXINSNS);
        return -1;
    }
    struct sock_fprog fprog = {
        .len = (unsigned short)(len / sizeof(struct sock_filter)),
        .filter = (struct sock_filter *)(uintptr_t)prog,
    };
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) {
        snprintf(err, errlen, "prctl(PR_SET_SECCOMP): %s", strerror(errno));
        return -1;
    }
    return 0;
}
