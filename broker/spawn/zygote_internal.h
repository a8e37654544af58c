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

int64_t vf_zy_left_ms(int64_t deadline_ms);
/* One message (and up to one fd) before the deadline. Returns its length, 0 on
 * EOF, -1 on timeout or error. */
ssize_t vf_zy_recv_msg(int fd, void *buf, size_t cap, int *got_fd, int64_t deadline_ms);
bool vf_zy_msg_is(const vf_zy_msg *m, ssize_t n, uint32_t op);

#endif
