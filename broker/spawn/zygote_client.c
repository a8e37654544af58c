#include "broker/spawn/zygote_client.h"

#include "broker/spawn/fresh_spawn.h"
#include "broker/spawn/subuid_map.h"
#include "broker/spawn/zygote_internal.h"

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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ipc_fds.h"

#include "ipc/ipc_frame.h"
#include "ipc/ipc_messages.h"
#include "ipc/zygote_proto.h"

/* Ready within this long, or it is not going to be (ASan builds are slow). */
#define HELLO_WAIT_MS 15000
/* A healthy zygote announces a worker at once, or forks one in about a
 * millisecond; when lookups have waited this long and none came, it is stuck
 * (stopped, hung) and the supervisor replaces it. Never fatal for good. */
#define STUCK_MS 2000

/* Restart backoff: doubles per failed start, back to the floor once a
 * zygote has stayed up this long. */
#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 5000
#define STABLE_MS 10000
#define SUPERVISE_TICK_MS 100

static struct {
    atomic_bool running;    /* gen is set and serving */
    zy_gen *gen;            /* under lock */
    bool supervised;        /* start succeeded and stop has not run */
    pthread_t supervisor;
    int wake[2];            /* lookups and stop kick the supervisor */
    atomic_bool stopping;
    /* Fixed at the first start, so exec'd workers may keep pointers to them. */
    vf_zygote_options opts;
    char *path;
    uint8_t *ca;
    size_t ca_len;
    uint8_t *bpf;
    size_t bpf_len;
    /* The latest greeting. */
    uint32_t layers;
    unsigned pool;
    unsigned ca_certs;
    /* Progress, for the stuck check: when lookups began to find no worker
     * ready, and when one last got one. */
    atomic_int_least64_t wait_began_ms;
    atomic_int_least64_t last_ready_ms;
    atomic_uint restarts;
    atomic_uint rotations;  /* zygotes retired by age or worker count */
    atomic_uint draining;   /* retired ones still finishing their workers */
    atomic_uint max_workers, max_age_s;   /* rotation limits; 0 = none */
    char detail[200];
    pthread_mutex_t lock;   /* gen, detail */
} zy = { .wake = { -1, -1 }, .lock = PTHREAD_MUTEX_INITIALIZER };

int64_t vf_zy_left_ms(int64_t deadline_ms)
{
    int64_t left = deadline_ms - vf_now_ms();
    return left < 0 ? 0 : left;
}

zy_gen *vf_zy_gen_acquire(void)
{
    pthread_mutex_lock(&zy.lock);
    zy_gen *g = zy.gen;
    if (g)
        atomic_fetch_add(&g->refs, 1);
    pthread_mutex_unlock(&zy.lock);
    return g;
}

void vf_zy_gen_release(zy_gen *g)
{
    if (!g || atomic_fetch_sub(&g->refs, 1) != 1)
        return;
    close(g->ctl);
    if (g->pidfd >= 0)
        close(g->pidfd);
    free(g);
}

void vf_zy_kick(void)
{
    if (zy.wake[1] >= 0) {
        ssize_t w = write(zy.wake[1], "k", 1);
        (void)w;   /* full pipe: a kick is already pending */
    }
}

/* ---- messages ----------------------------------------------------------- */

/* One message (and up to one fd) before the deadline. Returns its length, 0 on
 * EOF, -1 on timeout or error. */
ssize_t vf_zy_recv_msg(int fd, void *buf, size_t cap, int *got_fd, int64_t deadline_ms)
{
    if (got_fd)
        *got_fd = -1;
    struct pollfd p = { .fd = fd, .events = POLLIN };
    for (;;) {
        int64_t left = vf_zy_left_ms(deadline_ms);
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
    /* Never more than one is expected; any other is closed. */
    if (n >= 0)
        (void)vf_ipc_take_fds(&mh, got_fd, got_fd ? 1 : 0);
    if (n > 0 && (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
        return -1;
    return n;
}

bool vf_zy_msg_is(const vf_zy_msg *m, ssize_t n, uint32_t op)
{
    return n >= (ssize_t)sizeof *m && m->magic == VF_ZY_MAGIC && m->op == op;
}

static void set_detail(const char *fmt, const char *a)
{
    pthread_mutex_lock(&zy.lock);
    snprintf(zy.detail, sizeof zy.detail, fmt, a);   /* fmt bounds a with a precision */
    pthread_mutex_unlock(&zy.lock);
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

/* Above 5 so the dup2s onto 3, 4 and 5 never land on each other. */
static int move_high(int fd)
{
    if (fd < 0 || fd > VF_ZY_USERNS_FD)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, VF_ZY_USERNS_FD + 1);
    close(fd);
    return moved;
}

static int spawn_zygote(const vf_zygote_options *o, int ctl_child, int ca_fd, pid_t *pid)
{
    char pool_arg[16];
    snprintf(pool_arg, sizeof pool_arg, "%u", o->pool);
    char *argv[] = { (char *)"verifetch-worker", (char *)"--zygote", pool_arg,
                     (char *)(o->private_namespaces ? "private" : "shared"), NULL };
    /* fd 3 = control socket (VF_ZY_CTL_FD), fd 4 = sealed CA (VF_ZY_CA_FD),
     * fd 5 = the broker's mapped user namespace (VF_ZY_USERNS_FD). */
    int userns = vf_subuid_userns_fd();
    int fds[3] = { ctl_child, ca_fd, userns };
    return vf_fresh_spawn(o->worker_path, argv, fds, userns >= 0 ? 3 : ca_fd >= 0 ? 2 : 1, pid);
}

void vf_zy_kill_and_reap(pid_t pid)
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
    if (vf_zy_msg_is(&m, n, VF_ZY_REFUSED)) {
        snprintf(err, errlen, "zygote refused to start: %s", m.detail);
        return -1;
    }
    if (!vf_zy_msg_is(&m, n, VF_ZY_HELLO) || m.bpf_len == 0 || m.bpf_len > VF_IPC_MAX_BPF ||
        m.bpf_len % VF_IPC_BPF_INSN_BYTES != 0 || (size_t)n != sizeof m + m.bpf_len ||
        (m.layers & ~VF_LAYER_ALL) || m.pool > VF_ZY_MAX_POOL) {
        snprintf(err, errlen, "zygote sent a malformed greeting");
        return -1;
    }
    /* A restarted zygote of the same executable compiles the same program;
     * exec'd workers may hold a pointer to the first one, so it stays. */
    if (!zy.bpf) {
        zy.bpf = malloc(m.bpf_len);
        if (!zy.bpf) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        memcpy(zy.bpf, buf + sizeof m, m.bpf_len);
        zy.bpf_len = m.bpf_len;
    }
    zy.layers = m.layers;
    zy.pool = m.pool;
    zy.ca_certs = m.ca_certs;
    set_detail("%s", m.detail);
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

/* Spawns one zygote and waits for its greeting. NULL with err on failure
 * (the half-started process is killed and reaped). */
static zy_gen *launch(char *err, size_t errlen)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, errlen, "zygote channel: %s", strerror(errno));
        return NULL;
    }
    int child = move_high(sv[1]);
    int ca_fd = zy.ca ? move_high(ca_memfd(zy.ca, zy.ca_len)) : -1;
    pid_t pid = -1;
    int rc = -1;
    if (child < 0 || (zy.ca && ca_fd < 0))
        snprintf(err, errlen, "zygote set-up: %s", strerror(errno));
    else if (spawn_zygote(&zy.opts, child, ca_fd, &pid) != 0)
        snprintf(err, errlen, "cannot start zygote %s: %s", zy.path, strerror(errno));
    else
        rc = 0;
    if (child >= 0)
        close(child);
    if (ca_fd >= 0)
        close(ca_fd);
    if (rc == 0) {
        size_t cap = sizeof(vf_zy_msg) + VF_IPC_MAX_BPF;
        uint8_t *buf = malloc(cap);
        ssize_t n = buf ? vf_zy_recv_msg(sv[0], buf, cap, NULL, vf_now_ms() + HELLO_WAIT_MS) : -1;
        if (n < 0)
            snprintf(err, errlen, "zygote was not ready within %d ms", HELLO_WAIT_MS);
        rc = n < 0 ? -1 : take_hello(buf, n, err, errlen);
        free(buf);
        if (rc != 0)
            vf_zy_kill_and_reap(pid);
    }
    zy_gen *g = rc == 0 ? calloc(1, sizeof *g) : NULL;
    if (rc == 0 && !g) {
        snprintf(err, errlen, "out of memory");
        vf_zy_kill_and_reap(pid);
    }
    if (!g) {
        close(sv[0]);
        return NULL;
    }
    g->ctl = sv[0];
    g->pid = pid;
    g->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    g->started_ms = vf_now_ms();
    atomic_init(&g->refs, 1);   /* zy.gen's own */
    return g;
}

static void install(zy_gen *g)
{
    pthread_mutex_lock(&zy.lock);
    zy.gen = g;
    pthread_mutex_unlock(&zy.lock);
    atomic_store(&zy.last_ready_ms, vf_now_ms());
    atomic_store(&zy.running, true);
}

static void describe_end(int status, char *out, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(out, len, "it was killed by signal %d", WTERMSIG(status));
    else if (WIFEXITED(status))
        snprintf(out, len, "it exited with status %d", WEXITSTATUS(status));
    else
        snprintf(out, len, "it ended");
}

/* Takes g out of service: lookups reading its control socket see EOF and fall
 * back (or wait), the process is killed if still there and always reaped. */
static void retire(zy_gen *g, const char *why)
{
    atomic_store(&g->failed, true);
    pthread_mutex_lock(&zy.lock);
    if (zy.gen == g) {
        zy.gen = NULL;
        atomic_store(&zy.running, false);
    }
    snprintf(zy.detail, sizeof zy.detail, "zygote restarting: %s", why);
    pthread_mutex_unlock(&zy.lock);
    shutdown(g->ctl, SHUT_RDWR);
    vf_zy_kill_and_reap(g->pid);
    fprintf(stderr, "verifetchd: zygote (pid %d) replaced: %s; exec'd workers until it is back\n",
            (int)g->pid, why);
    vf_zy_gen_release(g);   /* zy.gen's reference */
}

/* Lookups found no worker ready and none has been announced since, for
 * STUCK_MS; a READY still queued on the socket (nobody took it yet) is
 * progress too. Lookups that overflowed to exec count as unmet demand. */
static bool stuck(const zy_gen *g, int64_t now)
{
    int64_t unmet = atomic_load(&zy.wait_began_ms);
    int64_t ready = atomic_load(&zy.last_ready_ms);
    if (unmet <= ready || now - unmet <= STUCK_MS)
        return false;
    struct pollfd p = { .fd = g->ctl, .events = POLLIN };
    return poll(&p, 1, 0) == 0;
}

/* Why g must go, or NULL while it serves. died: its pidfd is readable. */
static const char *check_gen(zy_gen *g, bool died, char *buf, size_t len)
{
    if (died) {
        int status = 0;
        if (waitpid(g->pid, &status, WNOHANG) == g->pid) {
            /* reaped here; retire's kill_and_reap then finds ECHILD at once */
            describe_end(status, buf, len);
            g->pid = -g->pid;
        } else {
            snprintf(buf, len, "it ended");
        }
        return buf;
    }
    if (atomic_load(&g->failed))
        return "its control socket closed";
    if (stuck(g, vf_now_ms())) {
        snprintf(buf, len, "no worker ready within %d ms (stopped or hung)", STUCK_MS);
        return buf;
    }
    return NULL;
}

/* A fresh zygote takes over from g, which drains; g keeps serving when the
 * fresh one cannot start (tried again after the longest backoff). */
static void rotate(zy_gen *g, const char *why, int64_t *next_try)
{
    char err[256];
    zy_gen *n = launch(err, sizeof err);
    if (!n) {
        fprintf(stderr, "verifetchd: zygote (pid %d) due for replacement %s, but none started (%s); it "
                "keeps serving\n", (int)g->pid, why, err);
        *next_try = vf_now_ms() + BACKOFF_MAX_MS;
        return;
    }
    pthread_mutex_lock(&zy.lock);
    zy.gen = n;   /* zy.gen's reference to g passes to the draining list */
    pthread_mutex_unlock(&zy.lock);
    atomic_store(&zy.last_ready_ms, vf_now_ms());
    atomic_fetch_add(&zy.rotations, 1);
    fprintf(stderr, "verifetchd: zygote (pid %d) retired %s; pid %d (a fresh exec, fresh layout) takes new "
            "workers, the old one ends after its last\n", (int)g->pid, why, (int)n->pid);
    vf_zy_drain(g);
}

static void *supervise(void *arg)
{
    (void)arg;
    int64_t backoff = BACKOFF_MIN_MS, next_try = 0, next_rotation = 0;
    while (!atomic_load(&zy.stopping)) {
        atomic_store(&zy.draining, vf_zy_tend_draining());
        zy_gen *g = vf_zy_gen_acquire();
        struct pollfd p[2] = { { .fd = zy.wake[0], .events = POLLIN },
                               { .fd = g ? g->pidfd : -1, .events = POLLIN } };
        poll(p, 2, SUPERVISE_TICK_MS);
        char drain[64];
        if (p[0].revents)
            while (read(zy.wake[0], drain, sizeof drain) > 0)
                ;
        if (atomic_load(&zy.stopping)) {
            vf_zy_gen_release(g);
            break;
        }
        int64_t now = vf_now_ms();
        if (g) {
            char buf[96];
            const char *why = check_gen(g, p[1].revents != 0, buf, sizeof buf);
            if (why) {
                /* A zygote that dies soon after its start backs off longer. */
                if (now - g->started_ms >= STABLE_MS)
                    backoff = BACKOFF_MIN_MS;
                next_try = now + backoff;
                backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
                if (g->pid < 0)
                    g->pid = -g->pid;
                retire(g, why);
            } else if (now >= next_rotation && vf_zy_can_drain() &&
                       (why = vf_zy_rotation_due(g, atomic_load(&zy.max_workers), atomic_load(&zy.max_age_s),
                                                 now, buf, sizeof buf))) {
                rotate(g, why, &next_rotation);
            }
            vf_zy_gen_release(g);
            continue;
        }
        if (now < next_try)
            continue;
        char err[256];
        zy_gen *n = launch(err, sizeof err);
        if (n) {
            install(n);
            atomic_fetch_add(&zy.restarts, 1);
            fprintf(stderr, "verifetchd: zygote restarted (pid %d)\n", (int)n->pid);
        } else {
            set_detail("zygote restart failed: %.170s", err);
            fprintf(stderr, "verifetchd: zygote restart failed (%s); next try in %lld ms\n", err,
                    (long long)backoff);
            next_try = vf_now_ms() + backoff;
            backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
        }
    }
    return NULL;
}

int vf_zygote_start(const vf_zygote_options *o, char *err, size_t errlen)
{
    if (zy.supervised) {
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
    zy.opts = *o;
    vf_zygote_set_rotation(o->max_workers, o->max_age_s);
    zy.opts.worker_path = zy.path;
    zy.opts.ca_pem = zy.ca;
    zy_gen *g = launch(err, errlen);
    if (!g) {
        forget();
        return -1;
    }
    atomic_store(&zy.stopping, false);
    atomic_store(&zy.restarts, 0);
    atomic_store(&zy.rotations, 0);
    if (pipe2(zy.wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(err, errlen, "zygote supervisor: %s", strerror(errno));
        retire(g, "broker set-up failed");
        forget();
        return -1;
    }
    install(g);
    if (pthread_create(&zy.supervisor, NULL, supervise, NULL) != 0) {
        snprintf(err, errlen, "zygote supervisor thread could not start");
        retire(g, "broker set-up failed");
        close(zy.wake[0]);
        close(zy.wake[1]);
        zy.wake[0] = zy.wake[1] = -1;
        forget();
        return -1;
    }
    zy.supervised = true;
    return 0;
}

void vf_zy_end(zy_gen *g)
{
    /* It kills its workers and exits on EOF; give it a moment to. */
    shutdown(g->ctl, SHUT_RDWR);
    int64_t until = vf_now_ms() + KILL_WAIT_MS;
    while (waitpid(g->pid, NULL, WNOHANG) == 0) {
        if (vf_now_ms() >= until) {
            vf_zy_kill_and_reap(g->pid);
            break;
        }
        nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL);
    }
    vf_zy_gen_release(g);
}

void vf_zygote_stop(void)
{
    if (!zy.supervised)
        return;
    atomic_store(&zy.stopping, true);
    vf_zy_kick();
    pthread_join(zy.supervisor, NULL);
    zy.supervised = false;
    pthread_mutex_lock(&zy.lock);
    zy_gen *g = zy.gen;
    zy.gen = NULL;
    atomic_store(&zy.running, false);
    pthread_mutex_unlock(&zy.lock);
    if (g)
        vf_zy_end(g);
    vf_zy_end_draining();
    atomic_store(&zy.draining, 0);
    close(zy.wake[0]);
    close(zy.wake[1]);
    zy.wake[0] = zy.wake[1] = -1;
    forget();
}

void vf_zygote_get_status(vf_zygote_status *out)
{
    memset(out, 0, sizeof *out);
    out->supervised = zy.supervised;
    out->restarts = atomic_load(&zy.restarts);
    out->rotations = atomic_load(&zy.rotations);
    out->draining = atomic_load(&zy.draining);
    out->layers = zy.layers;
    out->pool = zy.pool;
    out->ca_certs = zy.ca_certs;
    pthread_mutex_lock(&zy.lock);
    out->running = zy.gen != NULL && atomic_load(&zy.running);
    out->pid = zy.gen ? zy.gen->pid : 0;
    snprintf(out->detail, sizeof out->detail, "%s", zy.detail[0] ? zy.detail : "zygote not started");
    pthread_mutex_unlock(&zy.lock);
}

void vf_zygote_set_rotation(unsigned max_workers, unsigned max_age_s)
{
    atomic_store(&zy.max_workers, max_workers);
    atomic_store(&zy.max_age_s, max_age_s);
}

void vf_zy_note_waiting(void)
{
    /* Opens an unmet period unless one is open already. */
    int64_t now = vf_now_ms();
    if (atomic_load(&zy.wait_began_ms) <= atomic_load(&zy.last_ready_ms))
        atomic_store(&zy.wait_began_ms, now);
}

void vf_zy_note_ready(void)
{
    atomic_store(&zy.last_ready_ms, vf_now_ms());
}

int64_t vf_zy_last_ready_ms(void)
{
    return atomic_load(&zy.last_ready_ms);
}

bool vf_zygote_supervised(void)
{
    return zy.supervised;
}

bool vf_zygote_wait_up(int64_t deadline_ms, int cancel_fd)
{
    while (!atomic_load(&zy.running)) {
        if (!zy.supervised || vf_now_ms() >= deadline_ms)
            return false;
        struct pollfd p = { .fd = cancel_fd, .events = POLLIN };
        if (poll(&p, 1, 20) > 0)
            return false;
    }
    return true;
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

