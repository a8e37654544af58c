/* The zygote's turn line: a lookup alone in line has its turn at once and
 * makes no eventfd for it (it made one and closed it again, two system calls
 * per lookup); one behind the head waits and has its turn when the head
 * leaves. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>

#include "broker/spawn/turn_line.h"
#include "ipc/ipc_frame.h"
#include "tests/support/syscall_trap.h"

static vf_turn_line line = VF_TURN_LINE_INIT;

static void alone_in_line(void *arg)
{
    vf_turn_rc *rc = arg;
    vf_turn me;
    vf_turn_join(&line, &me);
    *rc = vf_turn_wait(&line, &me, -1, vf_now_ms() + 1000);
    vf_turn_leave(&line, &me);
}

Test(turn_line, alone_in_line_has_its_turn_without_an_eventfd)
{
    vf_turn_rc rc = VF_TURN_TIMEOUT;
    int made = syscall_trap_run(SYS_eventfd2, alone_in_line, &rc);
    if (made < 0)
        cr_skip_test("no seccomp filter here");
    cr_assert_eq(made, 0, "%d eventfds made for a turn that was already ours", made);
    cr_assert_eq(rc, VF_TURN_MINE);
    cr_assert_eq(vf_turn_waiting(&line), 0);
}

static atomic_int second_rc = -1;

static void *second_in_line(void *arg)
{
    vf_turn *me = arg;
    atomic_store(&second_rc, vf_turn_wait(&line, me, -1, vf_now_ms() + 5000));
    return NULL;
}

Test(turn_line, the_next_in_line_has_its_turn_when_the_head_leaves)
{
    vf_turn head, next;
    vf_turn_join(&line, &head);
    vf_turn_join(&line, &next);
    cr_assert_eq(vf_turn_wait(&line, &head, -1, vf_now_ms() + 1000), VF_TURN_MINE);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, second_in_line, &next), 0);
    struct timespec ts = { 0, 50 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    cr_assert_eq(atomic_load(&second_rc), -1, "the second had its turn while the head was still there");
    vf_turn_leave(&line, &head);
    pthread_join(t, NULL);
    cr_assert_eq(atomic_load(&second_rc), VF_TURN_MINE);
    vf_turn_leave(&line, &next);
    cr_assert_eq(vf_turn_waiting(&line), 0);
}
