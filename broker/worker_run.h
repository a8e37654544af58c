/* Run one confined worker: exec it fresh (never a fork of the broker's
 * memory, which holds keys), hand it a job and an fd, read its one result,
 * and always reap it. */
#ifndef VERIFETCH_WORKER_RUN_H
#define VERIFETCH_WORKER_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc_messages.h"

/* Time a worker gets beyond the job's own deadline before it is killed. */
#define VF_WORKER_GRACE_MS 1000

typedef struct {
    const char *path;        /* worker executable */
    const char *test_hook;   /* forwarded in the job; NULL normally */
} vf_worker_spec;

/* 0: *out holds a strictly decoded result. -1: transport failure, detail says
 * what happened to the worker (killed by a signal, deadline, malformed frame).
 * pass_fd is sent with the job and stays owned by the caller. */
int vf_worker_run(const vf_worker_spec *spec, vf_job *job, int pass_fd,
                  int64_t deadline_ms, vf_result *out, char *detail, size_t detail_len);

/* Human name for a signal that killed a worker, with the reason where obvious. */
const char *vf_signal_description(int sig);

#endif
