/* A first-come, first-served line of threads waiting for their turn at a
 * shared resource that only one of them should watch at a time (the
 * zygote's control socket). Only the head of the line has its turn; when it
 * leaves, the next one (and only it) is woken. No thundering herd, no
 * barging: a thread that arrives later never goes before one already there. */
#ifndef VERIFETCH_TURN_LINE_H
#define VERIFETCH_TURN_LINE_H

#include <pthread.h>
#include <stdbool.h>

typedef struct vf_turn {
    pthread_cond_t wake;
    struct vf_turn *next;
} vf_turn;

typedef struct {
    pthread_mutex_t lock;
    vf_turn *head, *tail;
    unsigned waiting;   /* in line, the head included */
} vf_turn_line;

#define VF_TURN_LINE_INIT { .lock = PTHREAD_MUTEX_INITIALIZER }

/* Joins at the tail; the caller must vf_turn_leave once, whatever happens. */
void vf_turn_join(vf_turn_line *l, vf_turn *t);
/* True once t is at the head (at once if it is); false after max_ms
 * without its turn, so the caller can check its deadline and cancellation. */
bool vf_turn_wait(vf_turn_line *l, vf_turn *t, int max_ms);
/* Leaves the line from wherever t is; a head that leaves wakes the next. */
void vf_turn_leave(vf_turn_line *l, vf_turn *t);
unsigned vf_turn_waiting(vf_turn_line *l);

#endif
