/* Retiring a zygote without failing a lookup. Workers forked from one zygote
 * share its address-space layout; after worker.zygote_max_workers workers or
 * worker.zygote_max_age_s seconds the supervisor execs a fresh zygote (a
 * fresh ASLR layout, a fresh canary source) and switches new lookups to it.
 * The old one gets DRAIN: it forks no more, its queued unclaimed workers are
 * closed here (it kills them), its claimed workers run to their end, and then
 * it exits by itself and is reaped here. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "broker/spawn/zygote_internal.h"
#include "ipc/ipc_frame.h"

#define MAX_DRAINING 8

static struct {
    zy_gen *g;
    int64_t since_ms;
} draining[MAX_DRAINING];
static size_t n_draining;

const char *vf_zy_rotation_due(const zy_gen *g, unsigned max_workers, unsigned max_age_s, int64_t now,
                               char *buf, size_t len)
{
    unsigned taken = atomic_load(&g->taken);
    if (max_workers && taken >= max_workers) {
        snprintf(buf, len, "after %u workers", taken);
        return buf;
    }
    if (max_age_s && now - g->started_ms >= (int64_t)max_age_s * 1000) {
        snprintf(buf, len, "after %lld s", (long long)((now - g->started_ms) / 1000));
        return buf;
    }
    return NULL;
}

bool vf_zy_can_drain(void)
{
    return n_draining < MAX_DRAINING;
}

void vf_zy_drain(zy_gen *g)
{
    atomic_store(&g->retired, true);
    vf_zy_msg m = { .magic = VF_ZY_MAGIC, .op = VF_ZY_DRAIN };
    /* A zygote that missed it (gone already) is reaped all the same. */
    (void)send(g->ctl, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
    draining[n_draining].g = g;
    draining[n_draining].since_ms = vf_now_ms();
    n_draining++;
}

/* Lookups that held g when it was retired may still take a worker from its
 * queue; once none does (only our reference is left, and no new one can be
 * had), whatever is queued will never be taken: closing a worker's status
 * channel makes the zygote kill it. */
static void close_queued(zy_gen *g)
{
    if (atomic_load(&g->refs) != 1)
        return;
    vf_zy_msg m;
    while (vf_zy_recv_msg(g->ctl, &m, sizeof m, NULL, vf_now_ms()) > 0)
        ;
}

static bool ended(const zy_gen *g)
{
    struct pollfd p = { .fd = g->pidfd, .events = POLLIN };
    if (g->pidfd >= 0)
        return poll(&p, 1, 0) > 0;
    return waitpid(g->pid, NULL, WNOHANG) != 0;   /* no pidfd: reaped here, or not ours */
}

unsigned vf_zy_tend_draining(void)
{
    size_t kept = 0;
    int64_t now = vf_now_ms();
    for (size_t i = 0; i < n_draining; i++) {
        zy_gen *g = draining[i].g;
        close_queued(g);
        if (ended(g)) {
            while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
                ;
            vf_zy_gen_release(g);
            continue;
        }
        if (now - draining[i].since_ms > VF_ZY_DRAIN_MAX_MS) {
            fprintf(stderr, "verifetchd: retired zygote (pid %d) still had workers after %d s; killed\n",
                    (int)g->pid, VF_ZY_DRAIN_MAX_MS / 1000);
            vf_zy_kill_and_reap(g->pid);
            vf_zy_gen_release(g);
            continue;
        }
        draining[kept++] = draining[i];
    }
    n_draining = kept;
    return (unsigned)kept;
}

void vf_zy_end_draining(void)
{
    for (size_t i = 0; i < n_draining; i++)
        vf_zy_end(draining[i].g);
    n_draining = 0;
}
