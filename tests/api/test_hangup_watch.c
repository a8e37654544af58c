/* The hang-up watch fires a suspended request's token when its client goes
 * away, and an id unwatched (or a slot since reused) never touches the
 * request that holds the slot now. */
#include <criterion/criterion.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "broker/api/hangup_watch.h"

#define MANY 200   /* 4 descriptors each: well inside a 1,024 limit */

static void pause_ms(long ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Whether the token fires within ms. */
static bool fires_within(vf_cancel *c, long ms)
{
    for (long waited = 0; waited <= ms; waited += 5) {
        if (vf_cancel_fired(c))
            return true;
        pause_ms(5);
    }
    return false;
}

typedef struct {
    int ours, theirs;   /* the broker's end and the client's */
    vf_cancel token;
    uint64_t id;
} watched;

static void watch(vf_hangup_watch *w, watched *x)
{
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    x->ours = sv[0];
    x->theirs = sv[1];
    cr_assert_eq(vf_cancel_init(&x->token), 0);
    x->id = vf_hangup_watch_add(w, x->ours, &x->token);
    cr_assert_neq(x->id, 0);
}

static void unwatch(watched *x)
{
    if (x->theirs >= 0)
        close(x->theirs);
    close(x->ours);
    vf_cancel_destroy(&x->token);
}

Test(hangup_watch, a_hang_up_fires_the_token_and_remove_says_so)
{
    vf_hangup_watch *w = vf_hangup_watch_start();
    cr_assert_not_null(w);
    watched x;
    watch(w, &x);
    cr_assert_eq(vf_hangup_watch_count(w), 1);
    close(x.theirs);
    x.theirs = -1;
    cr_assert(fires_within(&x.token, 1000), "no cancellation after the client hung up");
    cr_assert(vf_hangup_watch_remove(w, x.id), "remove did not report the hang-up");
    cr_assert_eq(vf_hangup_watch_count(w), 0);
    unwatch(&x);
    vf_hangup_watch_stop(w);
}

Test(hangup_watch, an_unwatched_socket_is_not_cancelled)
{
    vf_hangup_watch *w = vf_hangup_watch_start();
    watched x;
    watch(w, &x);
    cr_assert_not(vf_hangup_watch_remove(w, x.id), "a request answered normally was reported as hung up");
    close(x.theirs);
    x.theirs = -1;
    cr_assert_not(fires_within(&x.token, 100), "a socket no longer watched was cancelled");
    unwatch(&x);
    vf_hangup_watch_stop(w);
}

/* Hundreds watched at once, unwatched in an order unlike the one they came
 * in, their places reused: an old id removes nothing, and every request
 * still watched is cancelled by its own hang-up and only by it. */
Test(hangup_watch, old_ids_never_touch_the_requests_watched_now)
{
    vf_hangup_watch *w = vf_hangup_watch_start();
    static watched first[MANY], second[MANY];
    for (size_t i = 0; i < MANY; i++)
        watch(w, &first[i]);
    cr_assert_eq(vf_hangup_watch_count(w), MANY);
    for (size_t i = 0; i < MANY; i++) {
        size_t k = (i * 7) % MANY;   /* 7 and 200 are coprime: every one, out of order */
        cr_assert_not(vf_hangup_watch_remove(w, first[k].id));
        unwatch(&first[k]);
    }
    cr_assert_eq(vf_hangup_watch_count(w), 0);
    for (size_t i = 0; i < MANY; i++)
        watch(w, &second[i]);
    for (size_t i = 0; i < MANY; i++) {
        cr_assert_neq(first[i].id, second[i].id);
        /* Unwatched already: says "gone" and must not unwatch whoever holds the place now. */
        vf_hangup_watch_remove(w, first[i].id);
    }
    cr_assert_eq(vf_hangup_watch_count(w), MANY, "an old id unwatched a request of the second round");
    for (size_t i = 0; i < MANY; i += 2) {
        close(second[i].theirs);
        second[i].theirs = -1;
    }
    for (size_t i = 0; i < MANY; i++) {
        if (i % 2 == 0)
            cr_assert(fires_within(&second[i].token, 1000), "request %zu hung up and was not cancelled", i);
        else
            cr_assert_not(vf_cancel_fired(&second[i].token), "request %zu was cancelled by another's hang-up", i);
    }
    for (size_t i = 0; i < MANY; i++) {
        cr_assert_eq(vf_hangup_watch_remove(w, second[i].id), i % 2 == 0);
        unwatch(&second[i]);
    }
    cr_assert_eq(vf_hangup_watch_count(w), 0);
    vf_hangup_watch_stop(w);
}

Test(hangup_watch, fire_all_cancels_every_watched_request)
{
    vf_hangup_watch *w = vf_hangup_watch_start();
    watched x[3];
    for (size_t i = 0; i < 3; i++)
        watch(w, &x[i]);
    vf_hangup_watch_remove(w, x[1].id);
    vf_hangup_watch_fire_all(w);
    cr_assert(vf_cancel_fired(&x[0].token) && vf_cancel_fired(&x[2].token));
    cr_assert_not(vf_cancel_fired(&x[1].token), "fire_all cancelled a request no longer watched");
    for (size_t i = 0; i < 3; i++) {
        vf_hangup_watch_remove(w, x[i].id);
        unwatch(&x[i]);
    }
    vf_hangup_watch_stop(w);
}
