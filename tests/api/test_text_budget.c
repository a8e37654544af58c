/* The broker-wide bound on page text held at once (text_budget.h): a large
 * frame waits while others hold the room, a holder is never made to wait,
 * small frames pass, and a wait ends at the deadline or on cancellation. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "broker/lookup/text_budget.h"

#define MIB (1u << 20)

static vf_text_budget_wait patient(void)
{
    return (vf_text_budget_wait){ .deadline_ms = vf_now_ms() + 10000, .cancel_fd = -1 };
}

typedef struct {
    size_t bytes;
    atomic_int state;   /* 0 waiting, 1 granted, 2 refused */
    int64_t deadline_ms;
    int cancel_fd;
} taker;

static void *take_in_thread(void *p)
{
    taker *t = p;
    vf_text_budget_wait w = { .deadline_ms = t->deadline_ms, .cancel_fd = t->cancel_fd };
    vf_ipc_err e = vf_text_budget_gate(t->bytes, &w);
    atomic_store(&t->state, e == VF_IPC_OK ? 1 : 2);
    if (e == VF_IPC_OK)
        vf_text_budget_release();
    return NULL;
}

Test(text_budget, a_large_frame_waits_until_the_holder_is_done)
{
    vf_text_budget_wait w = patient();
    cr_assert_eq(vf_text_budget_gate(VF_TEXT_BUDGET_BYTES - 4 * MIB, &w), VF_IPC_OK);
    /* the holder itself is never made to wait, even past the bound */
    cr_assert_eq(vf_text_budget_gate(8 * MIB, &w), VF_IPC_OK);
    cr_assert_eq(vf_text_budget_held(), VF_TEXT_BUDGET_BYTES + 4 * MIB);

    taker t = { .bytes = 8 * MIB, .deadline_ms = vf_now_ms() + 10000, .cancel_fd = -1 };
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, take_in_thread, &t), 0);
    usleep(200 * 1000);
    cr_assert_eq(atomic_load(&t.state), 0, "another lookup's page must wait for room");
    vf_text_budget_release();
    pthread_join(th, NULL);
    cr_assert_eq(atomic_load(&t.state), 1);
    cr_assert_eq(vf_text_budget_held(), 0);
}

Test(text_budget, small_frames_pass_and_a_lone_page_larger_than_the_bound_goes_through)
{
    vf_text_budget_wait w = patient();
    cr_assert_eq(vf_text_budget_gate(VF_TEXT_BUDGET_BYTES * 2, &w), VF_IPC_OK);
    taker t = { .bytes = VF_TEXT_BUDGET_MIN_FRAME - 1, .deadline_ms = vf_now_ms() + 10000, .cancel_fd = -1 };
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, take_in_thread, &t), 0);
    pthread_join(th, NULL);
    cr_assert_eq(atomic_load(&t.state), 1, "a small frame never waits");
    vf_text_budget_release();
    cr_assert_eq(vf_text_budget_held(), 0);
}

Test(text_budget, waiting_ends_at_the_deadline_and_on_cancellation)
{
    vf_text_budget_wait w = patient();
    cr_assert_eq(vf_text_budget_gate(VF_TEXT_BUDGET_BYTES, &w), VF_IPC_OK);

    taker late = { .bytes = 2 * MIB, .deadline_ms = vf_now_ms() + 150, .cancel_fd = -1 };
    pthread_t th;
    int64_t t0 = vf_now_ms();
    cr_assert_eq(pthread_create(&th, NULL, take_in_thread, &late), 0);
    pthread_join(th, NULL);
    cr_assert_eq(atomic_load(&late.state), 2);
    cr_assert_geq(vf_now_ms() - t0, 140);

    int p[2];
    cr_assert_eq(pipe(p), 0);
    taker gone = { .bytes = 2 * MIB, .deadline_ms = vf_now_ms() + 10000, .cancel_fd = p[0] };
    cr_assert_eq(pthread_create(&th, NULL, take_in_thread, &gone), 0);
    usleep(100 * 1000);
    cr_assert_eq(atomic_load(&gone.state), 0);
    t0 = vf_now_ms();
    cr_assert_eq(write(p[1], "x", 1), 1);
    pthread_join(th, NULL);
    cr_assert_eq(atomic_load(&gone.state), 2);
    cr_assert_lt(vf_now_ms() - t0, 2000);
    close(p[0]);
    close(p[1]);
    vf_text_budget_release();
    cr_assert_eq(vf_text_budget_held(), 0);
}
