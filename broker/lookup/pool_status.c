#include "broker/lookup/pool_status.h"

#include <stdio.h>
#include <string.h>

#include "broker/spawn/worker_run.h"
#include "broker/spawn/worker_slot.h"
#include "broker/spawn/zygote_client.h"
#include "ipc/ipc_messages.h"

static void read_zygote(vf_pool_status *out)
{
    vf_zygote_status z;
    vf_zygote_get_status(&z);
    out->zygote_enabled = z.supervised;
    out->zygote_up = z.running;
    out->zygote_pid = (int)z.pid;
    out->zygote_restarts = z.restarts;
    out->zygote_rotations = z.rotations;
    out->zygote_draining = z.draining;
    snprintf(out->zygote_reason, sizeof out->zygote_reason, "%s", z.detail);
}

static void judge_readiness(vf_pool_status *out)
{
    uint32_t exec_layers = 0;
    bool exec_known = vf_worker_exec_layers(&exec_layers);
    uint32_t exec_missing = out->required_layers & ~exec_layers;
    char names[160];
    out->not_ready[0] = '\0';
    if (out->slots_total == 0) {
        snprintf(out->not_ready, sizeof out->not_ready, "worker pool has no slots");
    } else if (out->missing) {
        vf_layers_describe(out->missing, names, sizeof names);
        snprintf(out->not_ready, sizeof out->not_ready, "last worker lacked required confinement: %.120s", names);
    } else if (out->zygote_enabled && !out->zygote_up && out->required_layers && (!exec_known || exec_missing)) {
        /* Lookups wait for the zygote: exec'd workers cannot meet worker.require. */
        vf_layers_describe(exec_missing, names, sizeof names);
        snprintf(out->not_ready, sizeof out->not_ready, "%.90s; exec'd workers lack %.80s", out->zygote_reason,
                 exec_known ? names : "(unknown)");
    }
    out->ready = out->not_ready[0] == '\0';
}

void vf_pool_status_get(const vf_broker *b, vf_pool_status *out)
{
    memset(out, 0, sizeof *out);
    read_zygote(out);
    out->spawn = out->zygote_up && vf_zygote_serves(b->cfg->worker_path) ? "zygote" : "exec";
    vf_worker_slots_snapshot s;
    vf_worker_slots_read(&b->rt->worker_slots, &s);
    out->slots_total = s.total;
    out->slots_in_use = s.in_use;
    out->waiters = s.waiters;
    vf_last_confinement last;
    vf_worker_last_confinement(&last);
    out->last_known = last.known;
    out->last_from_zygote = last.from_zygote;
    out->last_layers = last.layers;
    vf_layers_describe(last.layers, out->last_layer_names, sizeof out->last_layer_names);
    out->required_layers = b->required_layers;
    out->missing = last.known ? b->required_layers & ~last.layers : 0;
    judge_readiness(out);
}
