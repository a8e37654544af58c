/* The one place that says which syscalls a worker may make after confinement.
 * Started from the set measured for libcurl HTTP+HTTPS (DESIGN.md) and grown
 * only by what a traced worker needed for gzip/br/zstd, libxml2 and jansson. */
#include "seccomp_filter.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "confine.h"
#include "sanitizer.h"

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
#endif
};

static int add(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned n_args,
               const struct scmp_arg_cmp *args)
{
    return seccomp_rule_add_array(ctx, action, nr, n_args, args);
}

int vf_seccomp_install(char *err, size_t errlen)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (!ctx) {
        snprintf(err, errlen, "seccomp_init failed");
        return -1;
    }
    int rc = 0;
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
    /* curl's multi handle makes a wakeup pair; only a local stream pair. */
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
    /* libcurl 7.88.1 calls connect() on a socket declared already connected
     * (curl issue #10626, fixed in 8.0.0): pretend it worked. The kernel never
     * runs the call, so nothing new is ever reached. Pinned by
     * tests/worker/test_curl_connect_pin.c. */
    if (rc == 0)
        rc = add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(connect), 0, NULL);
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
        return -1;
    }
    rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) {
        snprintf(err, errlen, "seccomp_load: %s", strerror(-rc));
        return -1;
    }
    return 0;
}
