/* The cancellation token wakes a thread blocked in poll() and stays fired. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "broker/lookup/cancel.h"

static void *fire_later(void *arg)
{
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    vf_cancel_fire(arg);
    return NULL;
}

Test(cancel, unfired_token_is_not_readable)
{
    vf_cancel c;
    cr_assert_eq(vf_cancel_init(&c), 0);
    struct pollfd p = {.fd = vf_cancel_fd(&c), .events = POLLIN};
    cr_assert_eq(poll(&p, 1, 0), 0);
    cr_assert(!vf_cancel_fired(&c));
    vf_cancel_destroy(&c);
}

Test(cancel, fire_from_another_thread_wakes_poll_and_stays_fired)
{
    vf_cancel c;
    cr_assert_eq(vf_cancel_init(&c), 0);
    pthread_t t;
    pthread_create(&t, NULL, fire_later, &c);
    struct pollfd p = {.fd = vf_cancel_fd(&c), .events = POLLIN};
    cr_assert_eq(poll(&p, 1, 5000), 1, "poll did not wake on fire");
    pthread_join(t, NULL);
    vf_cancel_fire(&c);   /* idempotent */
    cr_assert(vf_cancel_fired(&c));
    cr_assert_eq(poll(&p, 1, 0), 1, "token must stay readable for later pollers");
    vf_cancel_destroy(&c);
}

Test(cancel, null_token_is_never_fired)
{
    cr_assert(!vf_cancel_fired(NULL));
    cr_assert_eq(vf_cancel_fd(NULL), -1);
    vf_cancel_fire(NULL);
}

static int open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* One descriptor per token (an eventfd; the pipe it replaced took two). */
Test(cancel, a_token_holds_one_descriptor)
{
    int before = open_descriptors();
    vf_cancel c;
    cr_assert_eq(vf_cancel_init(&c), 0);
    cr_assert_eq(open_descriptors(), before + 1);
    vf_cancel_destroy(&c);
    cr_assert_eq(open_descriptors(), before);
}
