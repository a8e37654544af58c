/* How long a refused caller should wait before it tries again (Retry-After).
 * The admission queue drains at the rate lookups finish; each refusal books
 * the next place in a virtual line behind the callers already refused, so
 * well-behaved clients come back spread out at the rate the queue has room
 * for them, not all together one second later (which made the daemon answer
 * ~1,000 refusals a second at 1,024 clients on 64 slots). */
#ifndef VERIFETCH_DRAIN_CLOCK_H
#define VERIFETCH_DRAIN_CLOCK_H

#include <stdint.h>

#define VF_DRAIN_MAX_RETRY_S 30u   /* never told to wait longer */

typedef struct {
    int64_t window_ms;   /* start of the window finished lookups are counted in */
    unsigned finished;   /* in that window */
    double per_s;        /* smoothed lookups finished per second; 0 = none measured yet */
    double booked_ms;    /* when the last refused caller was told to come back */
} vf_drain_clock;

/* One admitted lookup finished at now_ms. */
void vf_drain_clock_finished(vf_drain_clock *c, int64_t now_ms);
/* A caller refused at now_ms: the seconds it should wait (1..VF_DRAIN_MAX_RETRY_S).
 * 1 while no drain rate has been measured. */
unsigned vf_drain_clock_book(vf_drain_clock *c, int64_t now_ms);
/* The queue has room again: nobody is left waiting outside. */
void vf_drain_clock_clear(vf_drain_clock *c, int64_t now_ms);

#endif
