#include "broker/api/health.h"

#include <string.h>

#include "broker/fleet/fleet.h"
#include "ipc/ipc_messages.h"

const char *vf_health_not_ready(const vf_health_inputs *in)
{
    if (in->draining)
        return "shutting down";
    if (!in->startup->probed)
        return "the start-up confinement probe failed";
    if (!in->pool->ready)
        return in->pool->not_ready[0] ? in->pool->not_ready : "the worker pool is not ready";
    return NULL;
}

static json_t *layer_map(uint32_t layers, bool known)
{
    json_t *map = json_object();
    for (uint32_t i = 0; i < VF_LAYER_COUNT; i++)
        json_object_set_new(map, vf_layer_name(1u << i), json_boolean(known && (layers >> i) & 1u));
    return map;
}

static json_t *pool_json(const vf_pool_status *p, const vf_admission_stats *q)
{
    json_t *zygote = json_pack("{s:b, s:b, s:i, s:i, s:i, s:i, s:s}", "enabled", p->zygote_enabled, "up",
                               p->zygote_up, "pid", p->zygote_pid, "restarts", (int)p->zygote_restarts,
                               "rotations", (int)p->zygote_rotations, "draining", (int)p->zygote_draining,
                               "detail", p->zygote_reason);
    return json_pack("{s:i, s:i, s:i, s:i, s:i, s:o}", "slots", (int)p->slots_total, "in_use",
                     (int)p->slots_in_use, "waiting_for_slot", (int)p->waiters, "admitted", (int)q->admitted,
                     "queue_limit_per_tenant", (int)q->tenant_limit, "zygote", zygote);
}

json_t *vf_health_json(const vf_health_inputs *in)
{
    const vf_pool_status *p = in->pool;
    const char *why = vf_health_not_ready(in);
    const char *state = vf_fleet_state_name();
    bool degraded = strcmp(state, "degraded") == 0;
    /* The last worker that answered is the truth; before any, the probe. */
    uint32_t layers = p->last_known ? p->last_layers : in->startup->layers;
    bool known = p->last_known || in->startup->probed;
    json_t *doc = json_pack("{s:s, s:b, s:s, s:o, s:o, s:s}", "status", why ? "not_ready" : degraded ? "degraded" : "ok",
                            "ready", why == NULL, "spawn", p->spawn ? p->spawn : "exec",
                            "confinement", layer_map(layers, known),
                            "pool", pool_json(p, in->queue), "state", state);
    json_object_set_new(doc, "confinement_source",
                        json_string(p->last_known ? (p->last_from_zygote ? "last worker (zygote)" : "last worker (exec)")
                                                  : "start-up probe"));
    /* The "uid" layer says only "not root": whether the worker is a
     * different user than the key holder is said here (issue 13 item 14). */
    if (in->startup->probed)
        json_object_set_new(doc, "worker_uid", json_pack("{s:i, s:b}", "uid", (int)in->startup->worker_uid,
                                                         "separate_from_broker", in->startup->uid_separated));
    if (why)
        json_object_set_new(doc, "not_ready", json_string(why));
    if (degraded)
        json_object_set_new(doc, "degraded", json_string("shared state store unreachable; quotas, circuits "
                                                         "and cache run on local state"));
    if (!in->startup->probed)
        json_object_set_new(doc, "confinement_probe",
                            json_string(in->startup->probe_detail[0] ? in->startup->probe_detail : "not run"));
    return doc;
}
