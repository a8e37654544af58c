/* Shared between the zygote's supervisor (zygote_client.c) and the lookups
 * that take its workers (zygote_workers.c). Not for use outside broker/spawn. */
#ifndef VERIFETCH_ZYGOTE_INTERNAL_H
#define VERIFETCH_ZYGOTE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/zygote_proto.h"

/* A process told to end gets this long before SIGKILL / giving up. */
#define KILL_WAIT_MS 2000

/* One started zygote. Lookups hold a reference while they read its control
 * socket, so the supervisor can retire it without closing an fd under them. */
typedef struct zy_gen {
    int ctl;
    pid_t pid;
    int pidfd;
    atomic_int refs;
    atomic_bool failed;     /* a lookup saw it fail; the supervisor retires it */
    atomic_bool retired;    /* a fresh zygote took over; this one drains (zygote_rotation.c) */
    atomic_uint taken;      /* workers lookups took from it */
    int64_t started_ms;
} zy_gen;

/* The serving zygote with a reference taken, or NULL while it restarts. */
zy_gen *vf_zy_gen_acquire(void);
void vf_zy_gen_release(zy_gen *g);
/* Wakes the supervisor (a lookup saw the control socket fail). */
void vf_zy_kick(void);

/* Progress for the stuck check: a lookup found no worker ready; one got one. */
void vf_zy_note_waiting(void);
void vf_zy_note_ready(void);
/* When the zygote last announced a worker (vf_now_ms time). */
int64_t vf_zy_last_ready_ms(void);

/* Kills pid (SIGKILL) and reaps it. */
void vf_zy_kill_and_reap(pid_t pid);
/* Closes g's control socket (it kills its workers and exits), waits up to
 * KILL_WAIT_MS for it, kills and reaps it, and drops the caller's reference. */
void vf_zy_end(zy_gen *g);

/* ---- retiring a zygote after some workers or some age (zygote_rotation.c);
 * supervisor thread only, except vf_zy_rotation_due. */

/* Why g has served long enough ("after N workers", "after N s"), or NULL. */
const char *vf_zy_rotation_due(const zy_gen *g, unsigned max_workers, unsigned max_age_s, int64_t now,
                               char *buf, size_t len);
/* Room for one more retired zygote to drain. */
bool vf_zy_can_drain(void);
/* g no longer serves new lookups: it gets DRAIN and is reaped once it ended.
 * Takes over the caller's reference. */
void vf_zy_drain(zy_gen *g);
/* Each supervisor turn: closes the workers still queued on drained zygotes
 * once no lookup reads them, reaps those that ended, kills one past
 * VF_ZY_DRAIN_MAX_MS. Returns how many are still draining. */
unsigned vf_zy_tend_draining(void);
/* At stop: ends every draining zygote. */
void vf_zy_end_draining(void);

/* A drained zygote exits when its last claimed worker has; those end by
 * their lookup's deadline, so this is only a backstop. */
#define VF_ZY_DRAIN_MAX_MS (15 * 60 * 1000)

int64_t vf_zy_left_ms(int64_t deadline_ms);
/* One message (and up to one fd) before the deadline. Returns its length, 0 on
 * EOF, -1 on timeout or error. */
ssize_t vf_zy_recv_msg(int fd, void *buf, size_t cap, int *got_fd, int64_t deadline_ms);
bool vf_zy_msg_is(const vf_zy_msg *m, ssize_t n, uint32_t op);

#endif
