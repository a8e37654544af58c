/* Waiting on one fd while a cancellation fd (a lookup's vf_cancel_fd, or -1)
 * may fire. broker/spawn takes the bare fd so it needs no lookup header. */
#ifndef VERIFETCH_CANCEL_WAIT_H
#define VERIFETCH_CANCEL_WAIT_H

#include <stdbool.h>
#include <stdint.h>

/* True when cancel_fd >= 0 and is readable now. */
bool vf_cancel_fd_fired(int cancel_fd);

typedef enum {
    VF_WAIT_READY = 0,     /* fd has events (or error/hang-up) */
    VF_WAIT_TIMEOUT,       /* deadline_ms (vf_now_ms clock) passed */
    VF_WAIT_CANCELLED,     /* cancel_fd fired first */
} vf_wait_rc;

/* Polls fd for events until deadline_ms; fd < 0 waits for the cancel or the
 * deadline only. EINTR is retried. */
vf_wait_rc vf_wait_fd(int fd, short events, int cancel_fd, int64_t deadline_ms);

#endif
