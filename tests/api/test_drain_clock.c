/* The Retry-After clock: refused callers are booked one after another at
 * the rate lookups finish, rounded up to whole seconds; nothing measured
 * yet means 1 s; a queue with room again forgets the bookings; a stuck
 * queue never tells anyone to wait longer than VF_DRAIN_MAX_RETRY_S. */
#include <criterion/criterion.h>

#include "broker/api/drain_clock.h"

/* Ten lookups a second finish from t = 1000 to t = 3000 ms. */
static void ten_a_second(vf_drain_clock *c)
{
    for (int64_t t = 1000; t <= 3000; t += 100)
        vf_drain_clock_finished(c, t);
}

Test(drain_clock, nothing_measured_yet_is_one_second)
{
    vf_drain_clock c = { 0 };
    for (int i = 0; i < 50; i++)
        cr_assert_eq(vf_drain_clock_book(&c, 1000), 1u);
}

Test(drain_clock, refused_callers_are_spread_at_the_drain_rate)
{
    vf_drain_clock c = { 0 };
    ten_a_second(&c);
    unsigned told[25];
    for (int i = 0; i < 25; i++)
        told[i] = vf_drain_clock_book(&c, 3000);
    /* Places 1..10 free within a second, 11..20 within two, 21..25 within three. */
    for (int i = 0; i < 25; i++)
        cr_assert_eq(told[i], (unsigned)(i / 10 + 1), "caller %d told %u s", i, told[i]);
    /* Time passing drains the bookings: a second later the next is told 2 s, not 4. */
    cr_assert_eq(vf_drain_clock_book(&c, 4000), 2u);
}

Test(drain_clock, room_in_the_queue_forgets_the_bookings)
{
    vf_drain_clock c = { 0 };
    ten_a_second(&c);
    for (int i = 0; i < 40; i++)
        vf_drain_clock_book(&c, 3000);
    vf_drain_clock_clear(&c, 3000);
    cr_assert_eq(vf_drain_clock_book(&c, 3000), 1u);
}

Test(drain_clock, a_stuck_queue_caps_the_wait)
{
    vf_drain_clock c = { 0 };
    ten_a_second(&c);
    /* Nothing finishes for a minute: the measured rate falls towards zero. */
    unsigned told = 0;
    for (int64_t t = 3000; t <= 63000; t += 1000)
        told = vf_drain_clock_book(&c, t);
    cr_assert_eq(told, VF_DRAIN_MAX_RETRY_S);
    for (int i = 0; i < 100; i++)
        cr_assert_leq(vf_drain_clock_book(&c, 63000), VF_DRAIN_MAX_RETRY_S);
}
