#include "broker/spawn/worker_slot.h"

#include <errno.h>
#include <time.h>

#include "ipc/ipc_frame.h"

bool vf_worker_slot_take(sem_t *slots, int64_t deadline_ms)
{
    /* sem_timedwait wants CLOCK_REALTIME; convert the monotonic budget. */
    int64_t left = deadline_ms - vf_now_ms();
    if (left < 0)
        left = 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += left / 1000;
    ts.tv_nsec += (left % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (sem_timedwait(slots, &ts) != 0) {
        if (errno != EINTR)
            return false;
    }
    return true;
}

void vf_worker_slot_give(sem_t *slots)
{
    sem_post(slots);
}
