#include "test_hooks.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/ipc_frame.h"
#include "worker/sandbox/sanitizer.h"

static const struct {
    const char *name;
    vf_hook hook;
} hooks[] = {
    {"socket_after_confine", VF_HOOK_SOCKET_AFTER_CONFINE},
    {"open_after_confine", VF_HOOK_OPEN_AFTER_CONFINE},
    {"fork_bomb", VF_HOOK_FORK_BOMB},
    {"sendto_stderr", VF_HOOK_SENDTO_STDERR},
    {"sendto_other_fd", VF_HOOK_SENDTO_OTHER_FD},
    {"prlimit_after_job", VF_HOOK_PRLIMIT_AFTER_JOB},
    {"recvmsg_after_job", VF_HOOK_RECVMSG_AFTER_JOB},
    {"hang", VF_HOOK_HANG},
    {"crash", VF_HOOK_CRASH},
    {"alloc_bomb", VF_HOOK_ALLOC_BOMB},
    {"garbage_result", VF_HOOK_GARBAGE_RESULT},
    {"oversized_frame", VF_HOOK_OVERSIZED_FRAME},
    {"trailing_bytes", VF_HOOK_TRAILING_BYTES},
    {"hang_after_result", VF_HOOK_HANG_AFTER_RESULT},
    {"report_random", VF_HOOK_REPORT_RANDOM},
    {"report_canary", VF_HOOK_REPORT_CANARY},
    {"open_after_landlock", VF_HOOK_OPEN_AFTER_LANDLOCK},
    {"renice_group", VF_HOOK_RENICE_GROUP},
    {"renice_pid1", VF_HOOK_RENICE_PID1},
    {"report_tls_ctx", VF_HOOK_REPORT_TLS_CTX},
    {"report_rehearsed", VF_HOOK_REPORT_REHEARSED},
    {"madvise_dontneed", VF_HOOK_MADVISE_DONTNEED},
    {"madvise_mergeable", VF_HOOK_MADVISE_MERGEABLE},
    {"madvise_hugepage", VF_HOOK_MADVISE_HUGEPAGE},
};

bool vf_hook_parse(const char *name, vf_hook *out)
{
    *out = VF_HOOK_NONE;
    if (!name)
        return true;
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++)
        if (strcmp(hooks[i].name, name) == 0) {
            *out = hooks[i].hook;
            return true;
        }
    return false;
}

static void block_forever(void)
{
    for (;;)
        poll(NULL, 0, -1);
}

static void alloc_until_refused(void)
{
    const size_t chunk = 16u * 1024u * 1024u;
#ifdef VF_UNDER_ASAN
    /* No RLIMIT_AS under ASan: stop at 256 MiB rather than exhaust the host
     * (1 GiB touched under ASan outlasted the test's 15 s on a loaded host). */
    size_t budget = 16;
#else
    size_t budget = SIZE_MAX;
#endif
    for (; budget > 0; budget--) {
        char *p = malloc(chunk);
        if (!p)
            break;
        memset(p, 0xA5, chunk); /* touch it: the memory must really exist */
    }
    _exit(3);
}

/* A real fault, not a sanitizer report: UBSan would intercept the null store
 * and then die by SIGSYS while symbolizing its message. */
#if defined(__GNUC__)
__attribute__((no_sanitize_undefined))
#endif
static void crash(void)
{
    *(volatile int *)(uintptr_t)0 = 1;
}

void vf_hook_after_confine(vf_hook hook)
{
    switch (hook) {
    case VF_HOOK_SOCKET_AFTER_CONFINE:
        (void)socket(AF_INET, SOCK_STREAM, 0);
        return;
    case VF_HOOK_OPEN_AFTER_CONFINE:
        (void)open("/etc/passwd", O_RDONLY);
        return;
    case VF_HOOK_FORK_BOMB:
        for (int i = 0; i < 64; i++)
            if (fork() == 0)
                _exit(0);
        return;
    case VF_HOOK_SENDTO_STDERR: {
        static const char forged[] = "{\"level\":\"info\",\"msg\":\"lookup ok\",\"forged\":true}\n";
        (void)sendto(2, forged, sizeof forged - 1, MSG_NOSIGNAL, NULL, 0);
        return;
    }
    case VF_HOOK_SENDTO_OTHER_FD: {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0)
            (void)sendto(sv[0], "x", 1, MSG_NOSIGNAL, NULL, 0);
        return;
    }
    case VF_HOOK_PRLIMIT_AFTER_JOB: {
        struct rlimit old;
        (void)prlimit(0, RLIMIT_CPU, NULL, &old);
        return;
    }
    case VF_HOOK_RECVMSG_AFTER_JOB: {
        char b;
        struct iovec iov = { .iov_base = &b, .iov_len = 1 };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
        (void)recvmsg(3, &msg, MSG_DONTWAIT);
        return;
    }
    case VF_HOOK_HANG:
        block_forever();
        return;
    case VF_HOOK_CRASH:
        crash();
        return;
    case VF_HOOK_ALLOC_BOMB:
        alloc_until_refused();
        return;
    /* Only the worker's own nice value may change: not its group's, not
     * another process's (given by pid rather than 0). */
    case VF_HOOK_RENICE_GROUP:
        (void)setpriority(PRIO_PGRP, 0, 19);
        return;
    case VF_HOOK_RENICE_PID1:
        (void)setpriority(PRIO_PROCESS, 1, 19);
        return;
    /* Only the huge-page advice is allowed (content/page_map.c). */
    case VF_HOOK_MADVISE_DONTNEED:
    case VF_HOOK_MADVISE_MERGEABLE:
    case VF_HOOK_MADVISE_HUGEPAGE: {
        size_t len = 4u << 20;
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            _exit(4);
        int advice = hook == VF_HOOK_MADVISE_DONTNEED ? MADV_DONTNEED
                     : hook == VF_HOOK_MADVISE_MERGEABLE ? MADV_MERGEABLE : MADV_HUGEPAGE;
        (void)madvise(p, len, advice);
        munmap(p, len);
        return;
    }
    default:
        return;
    }
}

/* sendmsg, as the real sender: the job filter allows sendto() only on the
 * fetch socket. */
static void send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        struct iovec iov = { .iov_base = (void *)c, .iov_len = n };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t k = sendmsg(fd, &msg, MSG_NOSIGNAL);
        if (k <= 0)
            return;
        c += k;
        n -= (size_t)k;
    }
}

bool vf_hook_send(vf_hook hook, int ipc_fd, const void *frame, size_t len)
{
    static const char junk[] = "\xc1\xc1 this is not msgpack \xc1";
    switch (hook) {
    case VF_HOOK_GARBAGE_RESULT:
        vf_ipc_send_frame(ipc_fd, junk, sizeof junk - 1, -1);
        return true;
    case VF_HOOK_OVERSIZED_FRAME: {
        uint32_t be = htonl(1u << 30);
        send_all(ipc_fd, &be, sizeof be);
        send_all(ipc_fd, junk, sizeof junk - 1);
        return true;
    }
    case VF_HOOK_TRAILING_BYTES: {
        char *buf = malloc(len + 4);
        if (!buf)
            return false;
        memcpy(buf, frame, len);
        memcpy(buf + len, "\xc0\xc0\xc0\xc0", 4); /* four msgpack nils after the map */
        vf_ipc_send_frame(ipc_fd, buf, len + 4, -1);
        free(buf);
        return true;
    }
    default:
        return false;
    }
}

void vf_hook_after_result(vf_hook hook)
{
    if (hook == VF_HOOK_HANG_AFTER_RESULT)
        block_forever();
}

void vf_hook_probe_open(char *out, size_t len)
{
    int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        snprintf(out, len, "open /etc/passwd: succeeded");
        close(fd);
    } else {
        snprintf(out, len, "open /etc/passwd: %s", strerror(errno));
    }
}
