#include "broker/api/drain_clock.h"

/* A rate sample spans at least this long; the smoothing halves old samples. */
#define WINDOW_MS 500

/* Folds the current window into the rate once it is long enough; a window
 * in which nothing finished pulls the rate down (the queue is stuck). */
static void roll(vf_drain_clock *c, int64_t now_ms)
{
    if (c->window_ms == 0) {
        c->window_ms = now_ms;
        return;
    }
    int64_t span = now_ms - c->window_ms;
    if (span < WINDOW_MS)
        return;
    double sample = 1000.0 * c->finished / (double)span;
    c->per_s = c->per_s > 0 ? (c->per_s + sample) / 2 : sample;
    c->window_ms = now_ms;
    c->finished = 0;
}

void vf_drain_clock_finished(vf_drain_clock *c, int64_t now_ms)
{
    roll(c, now_ms);
    c->finished++;
}

unsigned vf_drain_clock_book(vf_drain_clock *c, int64_t now_ms)
{
    roll(c, now_ms);
    if (c->per_s <= 0)
        return 1;
    double now = (double)now_ms, cap = now + 1000.0 * VF_DRAIN_MAX_RETRY_S;
    if (c->booked_ms < now)
        c->booked_ms = now;
    /* A place frees up each time a lookup finishes. */
    c->booked_ms += 1000.0 / c->per_s;
    if (c->booked_ms > cap)
        c->booked_ms = cap;
    unsigned wait_s = (unsigned)((c->booked_ms - now + 999.0) / 1000.0);   /* whole seconds, rounded up */
    return wait_s < 1 ? 1u : wait_s;
}

void vf_drain_clock_clear(vf_drain_clock *c, int64_t now_ms)
{
    if (c->booked_ms > (double)now_ms)
        c->booked_ms = (double)now_ms;
}
