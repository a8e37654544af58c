#include "broker/lookup/text_budget.h"

#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t freed = PTHREAD_COND_INITIALIZER;
static size_t held;
/* Initial-exec, like the fleet's per-thread state (state_store.c): the
 * default model would make the broker need ld.so itself for __tls_get_addr. */
static __thread __attribute__((tls_model("initial-exec"))) size_t mine;

/* Waits in short slices: a condition variable cannot watch the cancel fd. */
#define WAIT_SLICE_MS 20

static bool cancelled(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return fd >= 0 && poll(&p, 1, 0) > 0;
}

static void wait_slice(int64_t left_ms)
{
    int64_t ms = left_ms < WAIT_SLICE_MS ? left_ms : WAIT_SLICE_MS;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)(ms * 1000000);
    until.tv_sec += until.tv_nsec / 1000000000;
    until.tv_nsec %= 1000000000;
    pthread_cond_timedwait(&freed, &lock, &until);
}

vf_ipc_err vf_text_budget_gate(size_t payload_len, void *ctx)
{
    const vf_text_budget_wait *w = ctx;
    if (payload_len < VF_TEXT_BUDGET_MIN_FRAME)
        return VF_IPC_OK;
    pthread_mutex_lock(&lock);
    while (mine == 0 && held > 0 && held + payload_len > VF_TEXT_BUDGET_BYTES) {
        int64_t left = w->deadline_ms - vf_now_ms();
        if (left <= 0 || cancelled(w->cancel_fd)) {
            pthread_mutex_unlock(&lock);
            return VF_IPC_ERR_TIMEOUT;
        }
        wait_slice(left);
    }
    held += payload_len;
    mine += payload_len;
    pthread_mutex_unlock(&lock);
    return VF_IPC_OK;
}

void vf_text_budget_release(void)
{
    if (mine == 0)
        return;
    pthread_mutex_lock(&lock);
    held -= mine;
    mine = 0;
    pthread_cond_broadcast(&freed);
    pthread_mutex_unlock(&lock);
}

size_t vf_text_budget_held(void)
{
    pthread_mutex_lock(&lock);
    size_t n = held;
    pthread_mutex_unlock(&lock);
    return n;
}
