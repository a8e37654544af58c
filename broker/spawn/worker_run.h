/* Run one confined worker for one hop: a fresh worker process that never held
 * broker memory (forked by the zygote, which was itself exec'd fresh, or
 * posix_spawn'd and exec'd), hand it a job and an fd, read its one result, and
 * make sure it ends and is reaped. */
#ifndef VERIFETCH_BROKER_WORKER_RUN_H
#define VERIFETCH_BROKER_WORKER_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc_frame.h"
#include "ipc/ipc_messages.h"

/* Time a worker gets beyond the job's own deadline before it is killed. */
#define VF_WORKER_GRACE_MS 1000

/* How a worker was started, for metrics (verifetch_worker_spawn_seconds). */
typedef struct {
    bool from_zygote;          /* forked by the zygote (else posix_spawn + exec) */
    bool started;              /* a worker process existed */
    double spawn_seconds;      /* from the call until the worker held its socket */
} vf_worker_timing;

typedef struct {
    const char *path;          /* worker executable */
    const char *test_hook;     /* forwarded in the job; NULL normally */
    uint32_t required_layers;  /* VF_LAYER_*: the worker refuses to fetch, and the
                                * attempt fails, unless all of these were applied */
    vf_worker_timing *timing;  /* optional, filled in by vf_worker_run */
    bool has_cancel;           /* cancel_fd is a lookup's vf_cancel_fd() */
    int cancel_fd;             /* readable once the lookup is cancelled: the worker
                                * is SIGKILLed and the run returns -1 at once */
    vf_ipc_gate result_gate;   /* optional: asked before the result frame is read */
    void *result_gate_ctx;
} vf_worker_spec;

/* The broker itself ran out of descriptors or memory starting a worker: its
 * own fault, not the worker's, the origin's or the provider's. */
#define VF_WORKER_RUN_LOCAL (-2)

/* 0: *out holds a strictly decoded result (out->layers says how the worker was
 * confined). -1: transport failure, detail says what happened to the worker
 * (killed by a signal, deadline, malformed frame, missing confinement).
 * VF_WORKER_RUN_LOCAL: no worker could be started here (EMFILE, ENFILE,
 * ENOMEM...); detail starts "local: ".
 * pass_fd is sent with the job and stays owned by the caller. The worker comes
 * from the zygote when one runs for spec->path, else from posix_spawn. */
int vf_worker_run(const vf_worker_spec *spec, vf_job *job, int pass_fd,
                  int64_t deadline_ms, vf_result *out, char *detail, size_t detail_len);

/* How the last worker that answered was confined (any spawn path), for
 * readiness: health reports what workers really get, not a start-up snapshot. */
typedef struct {
    bool known;          /* a worker has answered since start-up */
    bool from_zygote;
    uint32_t layers;     /* VF_LAYER_* it applied */
} vf_last_confinement;

void vf_worker_last_confinement(vf_last_confinement *out);

/* The layers the last exec'd worker applied (an exec'd worker that refused
 * for missing layers counts); false while no exec'd worker has answered. */
bool vf_worker_exec_layers(uint32_t *layers);

/* Human name for a signal that killed a worker, with the reason where obvious. */
const char *vf_signal_description(int sig);

#endif
