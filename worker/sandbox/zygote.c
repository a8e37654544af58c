#include "worker/sandbox/zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "worker/fetch/ca_store.h"
#include "worker/fetch/client_ctx.h"
#include "worker/sandbox/broker_userns.h"
#include "worker/sandbox/heap_plug.h"
#include "worker/sandbox/confine.h"
#include "worker/fetch/fetch.h"
#include "worker/fetch/fork_random.h"
#include "worker/fetch/spki_decoders.h"
#include "worker/fetch/tls_rehearsal.h"
#include "ipc/ipc_fds.h"
#include "ipc/ipc_messages.h"
#include "worker/sandbox/landlock.h"
#include "worker/sandbox/namespaces.h"
#include "worker/sandbox/seccomp_filter.h"
#include "worker/sandbox/stack_canary.h"
#include "worker_job.h"
#include "ipc/zygote_proto.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* Live workers at once; the broker's own limit is far lower. */
#define MAX_KIDS 1024

typedef struct {
    pid_t pid;
    int pidfd;
    int status;   /* our end of the worker's status channel, -1 once the broker closed it */
    bool claimed; /* the broker took it for a job */
    bool dead;    /* reaped: drop from the table */
    int64_t kill_at; /* claimed: monotonic ms after which it is killed; 0 = not yet set */
    bool killed_at_deadline; /* we killed it at kill_at: the broker is told, not left to guess */
} kid;

enum { SLOT_CTL, SLOT_PIDFD, SLOT_STATUS };

/* The zygote's own bookkeeping, in a mapping its workers do not inherit
 * (MADV_DONTFORK): a worker never reads it, and each of its pages that a fork
 * shared with a live worker cost the zygote a page copy on its next write
 * (5-6 page faults of the zygote per fork, now 2-3: tests/worker/test_zygote_faults.c). */
typedef struct {
    size_t n_kids;
    kid kids[MAX_KIDS];
    struct pollfd pfd[1 + 2 * MAX_KIDS];
    struct { int type; size_t kid; } what[1 + 2 * MAX_KIDS];
} book_t;
static book_t *book;
static unsigned pool_target;
static unsigned cpus = 1;     /* the CPUs we may run on (sched_getaffinity) */
static bool draining;         /* the broker sent DRAIN: a newer zygote serves */
static bool mapped;           /* we joined the broker's mapped user namespace */
static bool private_ns;
static unsigned long clone_flags;
static vf_worker_ctx child_ctx;
static void *exec_bpf;        /* the plain allowlist, for the broker's exec'd workers */
static size_t exec_bpf_len;

/* ---- messages ----------------------------------------------------------- */

static bool send_msg(int fd, const vf_zy_msg *m, const void *extra, size_t extra_len,
                     const int *fds, size_t n_fds)
{
    struct iovec iov[2] = { { (void *)m, sizeof *m }, { (void *)extra, extra_len } };
    char cbuf[CMSG_SPACE(3 * sizeof(int))];
    struct msghdr mh = { .msg_iov = iov, .msg_iovlen = extra_len ? 2 : 1 };
    if (n_fds > 0) {
        memset(cbuf, 0, sizeof cbuf);
        mh.msg_control = cbuf;
        mh.msg_controllen = CMSG_SPACE(n_fds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(n_fds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, n_fds * sizeof(int));
    }
    ssize_t n;
    while ((n = sendmsg(fd, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)(sizeof *m + extra_len);
}

static void send_simple(int fd, uint32_t op, const char *detail)
{
    vf_zy_msg m = { .magic = VF_ZY_MAGIC, .op = op };
    if (detail)
        snprintf(m.detail, sizeof m.detail, "%s", detail);
    send_msg(fd, &m, NULL, 0, NULL, 0);
}

/* ---- a forked worker ---------------------------------------------------- */

static void child_main(int job_fd, bool rehearse)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NAME, "verifetch-worker");
    vf_stack_canary_renew(); /* this function never returns: _exit below */
    vf_fork_random_in_worker();
    /* Only stdio and the job socket survive; the control socket and every
     * other worker's descriptors are the zygote's business. */
    if (job_fd != VF_WORKER_IPC_FD && dup2(job_fd, VF_WORKER_IPC_FD) < 0)
        _exit(1);
    close_range(VF_WORKER_IPC_FD + 1, ~0u, 0);
    /* Under the broker's mapped namespace: a subordinate uid outside. On
     * failure the job is answered with why, unconfined it never runs. */
    if (mapped && vf_broker_userns_drop(child_ctx.preconfine_error, sizeof child_ctx.preconfine_error) != 0)
        _exit(vf_worker_serve(&child_ctx));
    if (rehearse)
        vf_worker_rehearse(); /* while nobody waits for us */
    child_ctx.rehearsed = rehearse;
    vf_worker_preconfine(&child_ctx);
    _exit(vf_worker_serve(&child_ctx)); /* as an exec'd worker: no clean-up (main.c) */
}

/* Forks one worker and announces it. rehearse: there is time to fault in what
 * a job touches before the job comes; when the pool ran dry a lookup may be
 * waiting for this very worker, so it skips that. */
static bool fork_kid(bool rehearse)
{
    if (book->n_kids == MAX_KIDS)
        return false;
    int job[2], status[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, job) != 0)
        return false;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, status) != 0) {
        close(job[0]);
        close(job[1]);
        return false;
    }
    long pid = vf_ns_clone(clone_flags);
    if (pid == 0)
        child_main(job[1], rehearse);
    close(job[1]);
    int pidfd = pid > 0 ? pidfd_open((pid_t)pid, 0) : -1;
    if (pidfd < 0) {
        if (pid > 0) {
            kill((pid_t)pid, SIGKILL);
            waitpid((pid_t)pid, NULL, 0);
        }
        close(job[0]);
        close(status[0]);
        close(status[1]);
        return false;
    }
    vf_zy_msg m = { .magic = VF_ZY_MAGIC, .op = VF_ZY_READY, .pid = (int32_t)pid };
    int fds[3] = { job[0], pidfd, status[1] };
    bool told = send_msg(VF_ZY_CTL_FD, &m, NULL, 0, fds, 3);
    close(job[0]);
    close(status[1]);
    book->kids[book->n_kids++] = (kid){ .pid = (pid_t)pid, .pidfd = pidfd, .status = status[0] };
    if (!told) {
        /* The broker never got it: it ends at once (EOF on its job socket). */
        book->kids[book->n_kids - 1].claimed = true;
        close(status[0]);
        book->kids[book->n_kids - 1].status = -1;
    }
    return true;
}

static unsigned unclaimed_kids(void)
{
    unsigned n = 0;
    for (size_t i = 0; i < book->n_kids; i++)
        n += !book->kids[i].claimed && !book->kids[i].dead;
    return n;
}

/* Workers the broker has given a job and not yet finished with (it closes
 * the status channel once it has the answer): the CPUs busy with jobs. One
 * that answered and is still exiting does not count, or every other fork at
 * one lookup at a time would skip its rehearsal. */
static unsigned working_kids(void)
{
    unsigned n = 0;
    for (size_t i = 0; i < book->n_kids; i++)
        n += book->kids[i].claimed && !book->kids[i].dead && book->kids[i].status >= 0;
    return n;
}

static void kill_kid(kid *k)
{
    pidfd_send_signal(k->pidfd, SIGKILL, NULL, 0);
}

static int32_t wait_status(const siginfo_t *si)
{
    switch (si->si_code) {
    case CLD_EXITED: return (int32_t)((si->si_status & 0xff) << 8);
    case CLD_KILLED: return (int32_t)(si->si_status & 0x7f);
    case CLD_DUMPED: return (int32_t)((si->si_status & 0x7f) | 0x80);
    default: return 0;
    }
}

static void reap_kid(kid *k)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PIDFD, (id_t)k->pidfd, &si, WEXITED | WNOHANG) != 0 || si.si_pid == 0)
        return;
    if (k->status >= 0) {
        vf_zy_msg m = { .magic = VF_ZY_MAGIC, .op = VF_ZY_EXITED, .pid = k->pid,
                        .wstatus = wait_status(&si), .killed_at_deadline = k->killed_at_deadline };
        send_msg(k->status, &m, NULL, 0, NULL, 0);
        /* Closing with the broker's CLAIMED still unread would make its read
         * fail with ECONNRESET instead of returning EXITED. */
        vf_zy_msg unread;
        while (recv(k->status, &unread, sizeof unread, MSG_DONTWAIT) > 0)
            ;
        close(k->status);
        k->status = -1;
    }
    close(k->pidfd);
    k->dead = true;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The broker wrote on, or closed, a worker's status channel. */
static void status_event(kid *k)
{
    vf_zy_msg m;
    ssize_t n = recv(k->status, &m, sizeof m, MSG_DONTWAIT);
    if (n == (ssize_t)sizeof m && m.magic == VF_ZY_MAGIC && m.op == VF_ZY_CLAIMED) {
        k->claimed = true;
        k->kill_at = now_ms() + (m.kill_after_ms ? m.kill_after_ms : 1);
        return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    /* Closed (or nonsense): the broker is done with this worker. One with a
     * job may finish (a worker ends by itself once it answered) until its
     * time is up; one without has no future. */
    if (!k->claimed || !k->kill_at)
        kill_kid(k);
    k->claimed = true;
    close(k->status);
    k->status = -1;
}

/* Kills claimed workers past their time; returns ms until the next is due
 * (-1: none). */
static int enforce_deadlines(void)
{
    int64_t now = now_ms(), next = -1;
    for (size_t i = 0; i < book->n_kids; i++) {
        kid *k = &book->kids[i];
        if (k->dead || !k->kill_at)
            continue;
        if (k->kill_at <= now) {
            kill_kid(k);
            k->killed_at_deadline = true;
            k->kill_at = now + 1000; /* until reaped; SIGKILL again is harmless */
        }
        if (next < 0 || k->kill_at < next)
            next = k->kill_at;
    }
    return next < 0 ? -1 : (int)(next - now);
}

static void drop_dead(void)
{
    size_t w = 0;
    for (size_t r = 0; r < book->n_kids; r++)
        if (!book->kids[r].dead)
            book->kids[w++] = book->kids[r];
    book->n_kids = w;
}

/* The broker sends only DRAIN on the control socket; reading it otherwise
 * tells whether it is still there. Returns false when it has gone. */
static bool read_control(void)
{
    for (;;) {
        vf_zy_msg m;
        char cbuf[CMSG_SPACE(4 * sizeof(int))];
        struct iovec iov = { &m, sizeof m };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                             .msg_controllen = sizeof cbuf };
        ssize_t n = recvmsg(VF_ZY_CTL_FD, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR;
        if (n == 0)
            return false;
        (void)vf_ipc_take_fds(&mh, NULL, 0);
        if (n == (ssize_t)sizeof m && m.magic == VF_ZY_MAGIC && m.op == VF_ZY_DRAIN)
            draining = true;
    }
}

/* ---- the loop ----------------------------------------------------------- */

/* Keeps pool_target workers announced and unclaimed, one fork per turn so a
 * claim or an exit is never kept waiting long. Returns the poll timeout. */
static int provide(void)
{
    if (draining)
        return -1;
    unsigned unclaimed = unclaimed_kids();
    if (unclaimed >= pool_target || book->n_kids == MAX_KIDS)
        return -1;
    /* With none left, a lookup may be waiting right now: no rehearsal then.
     * Nor when every CPU already runs a job: a rehearsal is about a fifth of
     * a small lookup's worker CPU, worth it only on a CPU that would idle. */
    bool rehearse = unclaimed > 0 && working_kids() < cpus;
    return fork_kid(rehearse) ? 0 : 100; /* on failure, retry later, not spin */
}

static void serve(void)
{
    for (;;) {
        int wait_ms = provide();
        if (wait_ms == 0 && unclaimed_kids() >= pool_target)
            wait_ms = -1;
        int due = enforce_deadlines();
        if (due >= 0 && (wait_ms < 0 || due < wait_ms))
            wait_ms = due;
        size_t n = 0;
        book->pfd[n] = (struct pollfd){ .fd = VF_ZY_CTL_FD, .events = POLLIN };
        book->what[n++].type = SLOT_CTL;
        for (size_t i = 0; i < book->n_kids; i++) {
            book->pfd[n] = (struct pollfd){ .fd = book->kids[i].pidfd, .events = POLLIN };
            book->what[n].type = SLOT_PIDFD;
            book->what[n++].kid = i;
            if (book->kids[i].status >= 0) {
                book->pfd[n] = (struct pollfd){ .fd = book->kids[i].status, .events = POLLIN };
                book->what[n].type = SLOT_STATUS;
                book->what[n++].kid = i;
            }
        }
        if (poll(book->pfd, n, wait_ms) < 0 && errno != EINTR)
            return;
        for (size_t s = 1; s < n; s++) {
            kid *k = &book->kids[book->what[s].kid];
            if (!book->pfd[s].revents || k->dead)
                continue;
            if (book->what[s].type == SLOT_PIDFD)
                reap_kid(k);
            else if (k->status >= 0)
                status_event(k);
        }
        drop_dead();
        if ((book->pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) && !read_control())
            return;
        if (draining && book->n_kids == 0)
            return; /* retired, and the last worker has ended */
    }
}

static void shutdown_kids(void)
{
    for (size_t i = 0; i < book->n_kids; i++)
        kill_kid(&book->kids[i]);
    for (size_t i = 0; i < book->n_kids; i++) {
        siginfo_t si;
        waitid(P_PIDFD, (id_t)book->kids[i].pidfd, &si, WEXITED);
    }
}

/* ---- start-up ----------------------------------------------------------- */

static int open_book(char *err, size_t errlen)
{
    void *p = mmap(NULL, sizeof *book, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || madvise(p, sizeof *book, MADV_DONTFORK) != 0) {
        snprintf(err, errlen, "zygote table: %s", strerror(errno));
        return -1;
    }
    book = p;
    return 0;
}

static int load_ca(size_t *n_certs, char *err, size_t errlen)
{
    *n_certs = 0;
    struct stat st;
    if (fstat(VF_ZY_CA_FD, &st) != 0)
        return 0; /* no CA given: TLS jobs bring their own */
    int rc = -1;
    char *pem = NULL;
    if (st.st_size <= 0 || (uint64_t)st.st_size > VF_ZY_MAX_CA) {
        snprintf(err, errlen, "CA bundle of %lld bytes is empty or too large", (long long)st.st_size);
        goto out;
    }
    pem = malloc((size_t)st.st_size);
    size_t got = 0;
    while (pem && got < (size_t)st.st_size) {
        ssize_t k = pread(VF_ZY_CA_FD, pem + got, (size_t)st.st_size - got, (off_t)got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    if (!pem || got != (size_t)st.st_size) {
        snprintf(err, errlen, "CA bundle could not be read");
        goto out;
    }
    child_ctx.ca_store = vf_ca_store_from_pem(pem, got, n_certs, err, errlen);
    rc = child_ctx.ca_store ? 0 : -1;
out:
    free(pem);
    close(VF_ZY_CA_FD);
    return rc;
}

/* Things a worker would otherwise pay for on every fetch. */
static void warm_tls_and_idn(void)
{
    SSL_CTX *c = SSL_CTX_new(TLS_client_method());
    SSL_CTX_free(c);
    /* Loads the iconv modules IDN conversion needs while files can be read. */
    char *url = strdup("http://b\xc3\xbc" "cher.invalid/");
    char ignored[64];
    if (url)
        vf_fetch_prepare(&url, ignored, sizeof ignored);
    free(url);
}

static int set_up(vf_zy_msg *hello, char *err, size_t errlen)
{
    if (open_book(err, errlen) != 0 || vf_worker_warm_up(err, errlen) != 0)
        return -1;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0)
        cpus = (unsigned)CPU_COUNT(&allowed);
    warm_tls_and_idn();
    vf_tls_rehearse(); /* OpenSSL's algorithm caches filled once, inherited by every worker */
    vf_worker_rehearse();
    vf_client_ctx_prepare(); /* each worker's TLS connection starts from it (client_ctx.h) */
    if (!vf_fork_random_arm()) { /* the last draw before forking (fork_random.h) */
        snprintf(err, errlen, "OpenSSL's random generators cannot be set to reseed in workers");
        return -1;
    }
    size_t n_certs = 0;
    if (load_ca(&n_certs, err, errlen) != 0)
        return -1;
    vf_spki_decoders_prepare(); /* the certificates' keys each worker decodes (spki_decoders.h) */
    /* Our workers' program admits receiving the job; the one the broker gets,
     * for workers it execs, is the plain allowlist. */
    void *bpf;
    size_t bpf_len;
    if (vf_seccomp_export(VF_SECCOMP_BEFORE_JOB, &bpf, &bpf_len, err, errlen) != 0)
        return -1;
    child_ctx.bpf = bpf;
    child_ctx.bpf_len = bpf_len;
    if (vf_seccomp_export(VF_SECCOMP_AFTER_JOB, &exec_bpf, &exec_bpf_len, err, errlen) != 0)
        return -1;
    if (vf_drop_root(err, errlen) != 0)
        return -1;
    int joined = vf_broker_userns_join(VF_ZY_USERNS_FD, err, errlen);
    if (joined < 0)
        return -1;
    mapped = joined == 1;
    /* In the broker's mapped namespace we are 0 there, which the workers
     * leave (child_main); a nested, unmapped one would leave them nothing to
     * drop to. */
    uint32_t layers = VF_LAYER_UID | (mapped ? VF_LAYER_USERNS : 0);
    unsigned long new_user = mapped ? 0 : CLONE_NEWUSER;
    if (private_ns) {
        clone_flags = vf_ns_probe_clone_flags(new_user | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWNS);
    } else {
        layers |= vf_ns_unshare(!mapped);
        clone_flags = vf_ns_probe_clone_flags(CLONE_NEWPID);
    }
    child_ctx.from_zygote = true;
    child_ctx.wait_forever = true;
    child_ctx.layers = layers | vf_ns_layers(clone_flags);
    /* The zygote itself never opens a file again nor gains privileges. */
    if (vf_set_no_new_privs(err, errlen) != 0 || vf_landlock_forbid_all(err, errlen) < 0)
        return -1;
    hello->layers = child_ctx.layers;
    hello->bpf_len = (uint32_t)exec_bpf_len;
    hello->pool = pool_target;
    hello->ca_certs = (uint32_t)n_certs;
    vf_heap_plug_holes(); /* last: no set-up allocation comes after it */
    return 0;
}

int vf_zygote_main(const char *pool_arg, const char *ns_mode)
{
    prctl(PR_SET_NAME, "vf-zygote");
    close_range(VF_ZY_USERNS_FD + 1, ~0u, 0);
    char err[VF_ZY_DETAIL] = "";
    char *end = NULL;
    unsigned long pool = strtoul(pool_arg, &end, 10);
    if (!end || *end || end == pool_arg || pool > VF_ZY_MAX_POOL) {
        snprintf(err, sizeof err, "pool size '%.32s' is not 0..%u", pool_arg, VF_ZY_MAX_POOL);
        send_simple(VF_ZY_CTL_FD, VF_ZY_REFUSED, err);
        return 1;
    }
    pool_target = pool ? (unsigned)pool : 1; /* every worker comes from the pool */
    if (strcmp(ns_mode, "private") != 0 && strcmp(ns_mode, "shared") != 0) {
        snprintf(err, sizeof err, "namespace mode '%.32s' is not shared or private", ns_mode);
        send_simple(VF_ZY_CTL_FD, VF_ZY_REFUSED, err);
        return 1;
    }
    private_ns = strcmp(ns_mode, "private") == 0;
    vf_zy_msg hello = { .magic = VF_ZY_MAGIC, .op = VF_ZY_HELLO };
    if (set_up(&hello, err, sizeof err) != 0) {
        send_simple(VF_ZY_CTL_FD, VF_ZY_REFUSED, err);
        return 1;
    }
    char names[160];
    vf_layers_describe(hello.layers, names, sizeof names);
    snprintf(hello.detail, sizeof hello.detail, "zygote ready: %s", names);
    if (!send_msg(VF_ZY_CTL_FD, &hello, exec_bpf, exec_bpf_len, NULL, 0))
        return 1;
    serve();
    shutdown_kids();
    return 0;
}
