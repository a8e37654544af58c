#include "broker/spawn/zygote_client.h"

#include "broker/spawn/fresh_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ipc_frame.h"
#include "ipc/ipc_messages.h"
#include "ipc/zygote_proto.h"

/* Ready within this long, or it is not going to be (ASan builds are slow). */
#define HELLO_WAIT_MS 15000
/* A healthy zygote has a worker ready at once, or forks one in about a
 * millisecond; this long means it is stuck, and the broker stops using it. */
#define READY_WAIT_MS 5000
#define KILL_WAIT_MS 2000

static struct {
    atomic_bool running;
    int ctl;
    pid_t pid;
    bool reaped;
    char *path;
    uint8_t *ca;
    size_t ca_len;
    uint8_t *bpf;
    size_t bpf_len;
    uint32_t layers;
    unsigned pool;
    unsigned ca_certs;
    char detail[200];
    pthread_mutex_t lock;    /* detail and reaped after start */
} zy = { .ctl = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

static int64_t left_ms(int64_t deadline_ms)
{
    int64_t left = deadline_ms - vf_now_ms();
    return left < 0 ? 0 : left;
}

/* ---- messages ----------------------------------------------------------- */

/* One message (and up to one fd) before the deadline. Returns its length, 0 on
 * EOF, -1 on timeout or error. */
static ssize_t recv_msg(int fd, void *buf, size_t cap, int *got_fd, int64_t deadline_ms)
{
    if (got_fd)
        *got_fd = -1;
    struct pollfd p = { .fd = fd, .events = POLLIN };
    for (;;) {
        int64_t left = left_ms(deadline_ms);
        int r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (r > 0)
            break;
        if ((r == 0 && left == 0) || (r < 0 && errno != EINTR))
            return -1;
    }
    struct iovec iov = { buf, cap };
    char cbuf[CMSG_SPACE(2 * sizeof(int))];
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                         .msg_controllen = sizeof cbuf };
    ssize_t n;
    while ((n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
            if (got_fd && *got_fd < 0)
                *got_fd = f;
            else
                close(f); /* never more than one is expected */
        }
    }
    if (n > 0 && (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
        return -1;
    return n;
}

static bool msg_is(const vf_zy_msg *m, ssize_t n, uint32_t op)
{
    return n >= (ssize_t)sizeof *m && m->magic == VF_ZY_MAGIC && m->op == op;
}

static void set_detail(const char *fmt, const char *a)
{
    pthread_mutex_lock(&zy.lock);
    snprintf(zy.detail, sizeof zy.detail, fmt, a);
    pthread_mutex_unlock(&zy.lock);
}

/* The zygote stopped answering properly: stop using it. It is reaped here if
 * it already died, else by vf_zygote_stop(). */
static void mark_failed(const char *why)
{
    bool was = atomic_exchange(&zy.running, false);
    set_detail("zygote unavailable: %s", why);
    pthread_mutex_lock(&zy.lock);
    if (!zy.reaped && zy.pid > 0 && waitpid(zy.pid, NULL, WNOHANG) == zy.pid)
        zy.reaped = true;
    pthread_mutex_unlock(&zy.lock);
    if (was)
        fprintf(stderr, "verifetchd: zygote unavailable (%s); starting workers with posix_spawn\n", why);
}

/* ---- start and stop ----------------------------------------------------- */

/* The CA travels as a sealed memfd: no size limit of a socket message, and the
 * zygote can read it but nobody can change it afterwards. */
static int ca_memfd(const uint8_t *ca, size_t len)
{
    int fd = memfd_create("verifetch-ca", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(fd, ca + done, len - done);
        if (k <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)k;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Above 4 so the dup2s onto 3 and 4 never land on each other. */
static int move_high(int fd)
{
    if (fd < 0 || fd > VF_ZY_CA_FD)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, VF_ZY_CA_FD + 1);
    close(fd);
    return moved;
}

static int spawn_zygote(const vf_zygote_options *o, int ctl_child, int ca_fd, pid_t *pid)
{
    char pool_arg[16];
    snprintf(pool_arg, sizeof pool_arg, "%u", o->pool);
    char *argv[] = { (char *)"verifetch-worker", (char *)"--zygote", pool_arg,
                     (char *)(o->private_namespaces ? "private" : "shared"), NULL };
    /* fd 3 = control socket (VF_ZY_CTL_FD), fd 4 = sealed CA (VF_ZY_CA_FD). */
    int fds[2] = { ctl_child, ca_fd };
    return vf_fresh_spawn(o->worker_path, argv, fds, ca_fd >= 0 ? 2 : 1, pid);
}

static void kill_and_reap(pid_t pid)
{
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

static int take_hello(const uint8_t *buf, ssize_t n, char *err, size_t errlen)
{
    vf_zy_msg m;
    if (n < (ssize_t)sizeof m) {
        snprintf(err, errlen, "zygote ended before it was ready");
        return -1;
    }
    memcpy(&m, buf, sizeof m);
    m.detail[sizeof m.detail - 1] = '\0';
    if (msg_is(&m, n, VF_ZY_REFUSED)) {
        snprintf(err, errlen, "zygote refused to start: %s", m.detail);
        return -1;
    }
    if (!msg_is(&m, n, VF_ZY_HELLO) || m.bpf_len == 0 || m.bpf_len > VF_IPC_MAX_BPF ||
        m.bpf_len % VF_IPC_BPF_INSN_BYTES != 0 || (size_t)n != sizeof m + m.bpf_len ||
        (m.layers & ~VF_LAYER_ALL) || m.pool > VF_ZY_MAX_POOL) {
        snprintf(err, errlen, "zygote sent a malformed greeting");
        return -1;
    }
    zy.bpf = malloc(m.bpf_len);
    if (!zy.bpf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(zy.bpf, buf + sizeof m, m.bpf_len);
    zy.bpf_len = m.bpf_len;
    zy.layers = m.layers;
    zy.pool = m.pool;
    zy.ca_certs = m.ca_certs;
    snprintf(zy.detail, sizeof zy.detail, "%s", m.detail);
    return 0;
}

static void forget(void)
{
    free(zy.path);
    free(zy.ca);
    free(zy.bpf);
    zy.path = NULL;
    zy.ca = zy.bpf = NULL;
    zy.ca_len = zy.bpf_len = 0;
}

int vf_zygote_start(const vf_zygote_options *o, char *err, size_t errlen)
{
    if (zy.ctl >= 0) {
        snprintf(err, errlen, "zygote already started");
        return -1;
    }
    if (o->pool > VF_ZY_MAX_POOL || (o->ca_pem_len > 0 && !o->ca_pem) ||
        o->ca_pem_len > VF_ZY_MAX_CA) {
        snprintf(err, errlen, "zygote options out of range");
        return -1;
    }
    zy.path = strdup(o->worker_path);
    zy.ca = o->ca_pem_len ? malloc(o->ca_pem_len) : NULL;
    if (!zy.path || (o->ca_pem_len && !zy.ca)) {
        forget();
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (zy.ca) {
        memcpy(zy.ca, o->ca_pem, o->ca_pem_len);
        zy.ca_len = o->ca_pem_len;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, errlen, "zygote channel: %s", strerror(errno));
        forget();
        return -1;
    }
    int child = move_high(sv[1]);
    int ca_fd = zy.ca ? move_high(ca_memfd(zy.ca, zy.ca_len)) : -1;
    pid_t pid = -1;
    int rc = -1;
    if (child < 0 || (zy.ca && ca_fd < 0))
        snprintf(err, errlen, "zygote set-up: %s", strerror(errno));
    else if (spawn_zygote(o, child, ca_fd, &pid) != 0)
        snprintf(err, errlen, "cannot start zygote %s: %s", o->worker_path, strerror(errno));
    else
        rc = 0;
    if (child >= 0)
        close(child);
    if (ca_fd >= 0)
        close(ca_fd);
    if (rc == 0) {
        size_t cap = sizeof(vf_zy_msg) + VF_IPC_MAX_BPF;
        uint8_t *buf = malloc(cap);
        ssize_t n = buf ? recv_msg(sv[0], buf, cap, NULL, vf_now_ms() + HELLO_WAIT_MS) : -1;
        if (n < 0)
            snprintf(err, errlen, "zygote was not ready within %d ms", HELLO_WAIT_MS);
        rc = n < 0 ? -1 : take_hello(buf, n, err, errlen);
        free(buf);
        if (rc != 0)
            kill_and_reap(pid);
    }
    if (rc != 0) {
        close(sv[0]);
        forget();
        return -1;
    }
    zy.ctl = sv[0];
    zy.pid = pid;
    zy.reaped = false;
    atomic_store(&zy.running, true);
    return 0;
}

void vf_zygote_stop(void)
{
    if (zy.ctl < 0)
        return;
    atomic_store(&zy.running, false);
    close(zy.ctl);
    zy.ctl = -1;
    pthread_mutex_lock(&zy.lock);
    if (!zy.reaped && zy.pid > 0) {
        /* It kills its workers and exits on EOF; give it a moment to. */
        int64_t until = vf_now_ms() + KILL_WAIT_MS;
        while (waitpid(zy.pid, NULL, WNOHANG) == 0) {
            if (vf_now_ms() >= until) {
                kill_and_reap(zy.pid);
                break;
            }
            nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL);
        }
        zy.reaped = true;
    }
    pthread_mutex_unlock(&zy.lock);
    forget();
}

void vf_zygote_get_status(vf_zygote_status *out)
{
    memset(out, 0, sizeof *out);
    out->running = atomic_load(&zy.running);
    out->pid = zy.pid;
    out->layers = zy.layers;
    out->pool = zy.pool;
    out->ca_certs = zy.ca_certs;
    pthread_mutex_lock(&zy.lock);
    snprintf(out->detail, sizeof out->detail, "%s", zy.detail[0] ? zy.detail : "zygote not started");
    pthread_mutex_unlock(&zy.lock);
}

bool vf_zygote_serves(const char *worker_path)
{
    return atomic_load(&zy.running) && zy.path && worker_path && strcmp(zy.path, worker_path) == 0;
}

bool vf_zygote_has_ca(const uint8_t *ca_pem, size_t len)
{
    return atomic_load(&zy.running) && zy.ca && ca_pem && len == zy.ca_len &&
           memcmp(zy.ca, ca_pem, len) == 0;
}

const uint8_t *vf_zygote_bpf_for(const char *worker_path, size_t *len)
{
    *len = 0;
    if (!zy.bpf || !zy.path || !worker_path || strcmp(zy.path, worker_path) != 0)
        return NULL;
    *len = zy.bpf_len;
    return zy.bpf;
}

/* ---- workers ------------------------------------------------------------ */

static void close_worker(vf_zygote_worker *w)
{
    if (w->ipc >= 0)
        close(w->ipc);
    if (w->pidfd >= 0)
        close(w->pidfd);
    if (w->status >= 0)
        close(w->status);
    *w = (vf_zygote_worker){ .pid = -1, .ipc = -1, .pidfd = -1, .status = -1 };
}

/* Exited while waiting (its zygote died, say): not worth handing a job. */
static bool still_alive(const vf_zygote_worker *w)
{
    struct pollfd p = { .fd = w->pidfd, .events = POLLIN };
    return poll(&p, 1, 0) == 0;
}

/* One announced worker off the control socket. READY messages stay queued
 * there, descriptors in flight, until a lookup takes one: the broker holds no
 * idle worker's descriptors, and threads need no lock (each recvmsg gets a
 * whole message of its own). 1: got one; 0: none queued; -1: zygote gone. */
static int next_ready(vf_zygote_worker *w)
{
    for (;;) {
        vf_zy_msg m;
        int fds[3] = { -1, -1, -1 };
        char cbuf[CMSG_SPACE(4 * sizeof(int))];
        struct iovec iov = { &m, sizeof m };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                             .msg_controllen = sizeof cbuf };
        ssize_t n = recvmsg(zy.ctl, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        if (n == 0)
            return -1;
        size_t n_fds = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                if (n_fds < 3)
                    fds[n_fds++] = fd;
                else
                    close(fd);
            }
        }
        *w = (vf_zygote_worker){ .pid = m.pid, .ipc = fds[0], .pidfd = fds[1], .status = fds[2] };
        if (msg_is(&m, n, VF_ZY_READY) && m.pid > 0 && n_fds == 3 &&
            !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && still_alive(w))
            return 1;
        if (msg_is(&m, n, VF_ZY_REFUSED)) {
            m.detail[sizeof m.detail - 1] = '\0';
            fprintf(stderr, "verifetchd: %s\n", m.detail);
        }
        close_worker(w); /* dead, malformed or not a READY: next one */
    }
}

/* Tells the zygote to fork a replacement and until when this worker may run:
 * then the zygote kills it even if we have long moved on. */
static void claim(vf_zygote_worker *w, int64_t kill_at_ms)
{
    int64_t left = kill_at_ms - vf_now_ms();
    vf_zy_msg m = { .magic = VF_ZY_MAGIC, .op = VF_ZY_CLAIMED, .pid = w->pid,
                    .kill_after_ms = (uint32_t)(left < 1 ? 1 : left > 86400000 ? 86400000 : left) };
    send(w->status, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

vf_zygote_spawn_rc vf_zygote_take(int64_t deadline_ms, vf_zygote_worker *w, char *detail,
                                  size_t detail_len)
{
    const int64_t kill_at = deadline_ms;
    *w = (vf_zygote_worker){ .pid = -1, .ipc = -1, .pidfd = -1, .status = -1 };
    int64_t stuck_at = vf_now_ms() + READY_WAIT_MS;
    for (;;) {
        if (!atomic_load(&zy.running))
            return VF_ZYGOTE_UNAVAILABLE;
        int got = next_ready(w);
        if (got < 0) {
            mark_failed("its control socket closed");
            return VF_ZYGOTE_UNAVAILABLE;
        }
        if (got > 0) {
            claim(w, kill_at);
            return VF_ZYGOTE_SPAWNED;
        }
        int64_t now = vf_now_ms();
        if (now >= deadline_ms) {
            snprintf(detail, detail_len, "no worker ready before the deadline");
            return VF_ZYGOTE_REFUSED;
        }
        if (now >= stuck_at) {
            mark_failed("no worker ready within 5 s");
            return VF_ZYGOTE_UNAVAILABLE;
        }
        /* The zygote forks the next worker as soon as it sees a claim; any
         * waiting thread may drain it, and the one after serves the rest. */
        int64_t until = deadline_ms < stuck_at ? deadline_ms : stuck_at;
        struct pollfd p = { .fd = zy.ctl, .events = POLLIN };
        int64_t left = until - now;
        poll(&p, 1, left > 50 ? 50 : (int)left);
    }
}

int vf_zygote_wait(vf_zygote_worker *w, int64_t deadline_ms, int *wstatus, int *killed)
{
    *killed = 0;
    *wstatus = 0;
    for (int phase = 0; phase < 2; phase++) {
        vf_zy_msg m;
        ssize_t n = recv_msg(w->status, &m, sizeof m, NULL, deadline_ms);
        if (msg_is(&m, n, VF_ZY_EXITED)) {
            *wstatus = m.wstatus;
            return 0;
        }
        if (n >= 0)
            return -1; /* EOF or nonsense: the zygote is gone */
        if (phase == 0) {
            pidfd_send_signal(w->pidfd, SIGKILL, NULL, 0);
            *killed = 1;
            deadline_ms = vf_now_ms() + KILL_WAIT_MS;
        }
    }
    return -1;
}

void vf_zygote_release(vf_zygote_worker *w)
{
    close_worker(w);
}

