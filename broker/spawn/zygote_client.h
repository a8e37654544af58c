/* The broker's side of the zygote (worker/zygote_proto.h): start it, take the
 * workers it forks ahead of time, learn how they ended. One zygote per broker
 * process. It is exec'd fresh from the worker executable with an empty
 * environment and only its control socket (plus a sealed memfd with the public
 * CA bundle), so it never holds broker memory, keys included, whenever it is
 * started. Its workers are forks of it, never of the broker.
 *
 * Threads: start and stop from the main thread, before the server starts and
 * after it stopped. Everything else may be called from any thread at once. */
#ifndef VERIFETCH_BROKER_ZYGOTE_H
#define VERIFETCH_BROKER_ZYGOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define VF_ZYGOTE_DEFAULT_POOL 4u

typedef struct {
    const char *worker_path;   /* the worker executable, run in --zygote mode */
    const uint8_t *ca_pem;     /* PEM bundle parsed once in the zygote; NULL: none */
    size_t ca_pem_len;
    unsigned pool;             /* workers kept forked and waiting (1..64; 0 means 1) */
    bool private_namespaces;   /* five new namespaces per worker (~2 ms more CPU each)
                                * instead of one shared user/net/ipc/mount set plus a
                                * pid namespace per worker */
    unsigned max_workers;      /* a fresh zygote after this many workers (0: never) */
    unsigned max_age_s;        /* ... or after this many seconds (0: never) */
} vf_zygote_options;

/* Workers forked from one zygote share its address-space layout. After
 * max_workers workers or max_age_s seconds, whichever comes first, the
 * supervisor execs a fresh zygote, switches new lookups to it, and lets the
 * old one finish the workers it gave out, then end (see zygote_rotation.c).
 * Applies from the next supervisor turn; 0 disables a limit. */
void vf_zygote_set_rotation(unsigned max_workers, unsigned max_age_s);

/* Starts the zygote and waits for it to be ready (bounded), then supervises
 * it from a thread: a zygote that dies, or has kept lookups waiting with no
 * worker for 2 s, is killed, reaped and restarted with backoff; meanwhile
 * workers are exec'd. Returns 0, or -1 with a reason; the broker then spawns
 * every worker with posix_spawn. */
int vf_zygote_start(const vf_zygote_options *o, char *err, size_t errlen);

/* Closes the control socket (the zygote kills its workers and exits) and
 * reaps it. Safe when never started. */
void vf_zygote_stop(void);

typedef struct {
    bool supervised;       /* started, and restarted by a supervisor when it dies or hangs */
    bool running;          /* serving now (false while it restarts) */
    unsigned restarts;     /* since start-up */
    unsigned rotations;    /* zygotes replaced by a fresh one for their age or worker count */
    unsigned draining;     /* replaced ones still finishing the workers they gave out */
    pid_t pid;             /* 0 while none runs */
    uint32_t layers;       /* VF_LAYER_* the zygote gives every worker (uid, namespaces) */
    unsigned pool;
    unsigned ca_certs;     /* certificates in its parsed CA, 0 when none */
    char detail[200];      /* its greeting, or why it is not running */
} vf_zygote_status;

void vf_zygote_get_status(vf_zygote_status *out);

/* True between a successful vf_zygote_start() and vf_zygote_stop(). */
bool vf_zygote_supervised(void);

/* Waits (bounded, cancellable) until the supervised zygote serves again;
 * false at the deadline, on cancel, or when none is supervised. */
bool vf_zygote_wait_up(int64_t deadline_ms, int cancel_fd);

/* True when workers of this executable come from the running zygote. */
bool vf_zygote_serves(const char *worker_path);

/* True when the zygote's parsed CA is exactly this bundle, so a job may say
 * "ca_preloaded" instead of carrying it. */
bool vf_zygote_has_ca(const uint8_t *ca_pem, size_t len);

/* The seccomp program the zygote compiled for worker_path, for workers of the
 * same executable started without it; NULL otherwise. */
const uint8_t *vf_zygote_bpf_for(const char *worker_path, size_t *len);

typedef struct {
    pid_t pid;
    int ipc;      /* our end of its job socket (its fd 3): job out, result in */
    int pidfd;    /* to kill it; the zygote is its parent and reaps it */
    int status;   /* EXITED arrives here; closing it makes the zygote kill it */
    unsigned seq; /* order in which workers went to lookups, process-wide: the
                   * line's own record of first come, first served */
} vf_zygote_worker;

typedef enum {
    VF_ZYGOTE_SPAWNED = 0,
    VF_ZYGOTE_UNAVAILABLE,   /* not running, or it just failed: use posix_spawn */
    VF_ZYGOTE_REFUSED,       /* none became ready before the deadline, or cancel_fd
                              * fired (detail says which) */
    VF_ZYGOTE_LOCAL,         /* the broker has no descriptors left to take a worker's
                              * (detail starts "local: "); the worker stays queued */
} vf_zygote_spawn_rc;

/* A lookup that has waited this long for a zygote worker, while the zygote
 * has announced none for as long, gets an exec'd one (VF_ZYGOTE_UNAVAILABLE)
 * without the zygote being given up. A zygote that keeps announcing workers
 * is waited for: on a CPU-starved host exec'd workers cost three times the
 * CPU of forked ones, and falling back to them made throughput collapse
 * (ramp: 150 lookups/s at 8 clients, 47 at 1,024). */
#define VF_ZYGOTE_OVERFLOW_MS 1000
/* However busy the zygote, no lookup waits longer than this for it. */
#define VF_ZYGOTE_OVERFLOW_MAX_MS 5000

/* Takes a worker the zygote forked ahead of time, waiting (bounded) for the
 * next when none is ready. The worker is waiting for its job on w->ipc; the
 * zygote kills it if it still runs at deadline_ms. */
vf_zygote_spawn_rc vf_zygote_take(int64_t deadline_ms, int cancel_fd, vf_zygote_worker *w,
                                  char *detail, size_t detail_len);

/* The same without telling the zygote yet: the caller hands the worker its
 * job first and then calls vf_zygote_claim, so the zygote's fork of a
 * replacement does not run ahead of the job on the same CPU. */
vf_zygote_spawn_rc vf_zygote_take_unclaimed(int64_t deadline_ms, int cancel_fd, vf_zygote_worker *w,
                                            char *detail, size_t detail_len);

/* Tells the zygote the worker is taken: it forks a replacement and kills
 * this one if it still runs at kill_at_ms. */
void vf_zygote_claim(vf_zygote_worker *w, int64_t kill_at_ms);

/* Lookups waiting in line for a zygote worker now (the head included). */
unsigned vf_zygote_waiters(void);

/* Waits for the worker's exit until deadline_ms; then SIGKILLs it and waits up
 * to two more seconds. Returns 0 with *wstatus (waitpid style) and *killed set
 * when we had to kill it or the zygote killed it at the claimed deadline, or
 * -1 when the zygote never said. */
int vf_zygote_wait(vf_zygote_worker *w, int64_t deadline_ms, int *wstatus, int *killed);

/* Done with the worker: it may end by itself until its deadline, when the
 * zygote kills it; the zygote always reaps it. */
void vf_zygote_release(vf_zygote_worker *w);

#endif
