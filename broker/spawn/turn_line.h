/* A first-come, first-served line of threads waiting for their turn at a
 * shared resource that only one of them should watch at a time (the
 * zygote's control socket). Only the head of the line has its turn; when it
 * leaves, the next one (and only it) is woken. No thundering herd, no
 * barging: a thread that arrives later never goes before one already there.
 * A waiter sleeps on an eventfd beside its lookup's cancel fd, so it wakes
 * for its turn, its cancellation or its deadline, never to poll. */
#ifndef VERIFETCH_TURN_LINE_H
#define VERIFETCH_TURN_LINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct vf_turn {
    int wake_fd;              /* eventfd; -1 (out of descriptors): a timed condition wait */
    pthread_cond_t wake;
    struct vf_turn *next;
} vf_turn;

typedef struct {
    pthread_mutex_t lock;
    vf_turn *head, *tail;
    unsigned waiting;   /* in line, the head included */
} vf_turn_line;

#define VF_TURN_LINE_INIT { .lock = PTHREAD_MUTEX_INITIALIZER }

typedef enum {
    VF_TURN_MINE = 0,     /* t is at the head */
    VF_TURN_TIMEOUT,      /* until_ms passed first */
    VF_TURN_CANCELLED,    /* cancel_fd fired first */
} vf_turn_rc;

/* Joins at the tail; the caller must vf_turn_leave once, whatever happens. */
void vf_turn_join(vf_turn_line *l, vf_turn *t);
/* Waits for t's turn (at once if it has it) until until_ms (vf_now_ms clock)
 * or until cancel_fd (-1: none) fires. */
vf_turn_rc vf_turn_wait(vf_turn_line *l, vf_turn *t, int cancel_fd, int64_t until_ms);
/* Leaves the line from wherever t is; a head that leaves wakes the next. */
void vf_turn_leave(vf_turn_line *l, vf_turn *t);
unsigned vf_turn_waiting(vf_turn_line *l);

#endif
