#include "broker/api/health.h"

#include "broker/fleet/fleet.h"
#include "ipc/ipc_messages.h"

json_t *vf_health_json(const vf_health *h)
{
    json_t *layers = json_object();
    for (uint32_t i = 0; i < VF_LAYER_COUNT; i++)
        json_object_set_new(layers, vf_layer_name(1u << i), json_boolean(h && h->probed && (h->layers >> i) & 1u));
    json_t *doc = json_pack("{s:s, s:o, s:s}", "status", "ok", "confinement", layers, "spawn",
                            h && h->zygote ? "zygote" : "exec");
    /* Shared store (fleet mode): "local", "ok" or "degraded" (lookups then run on local state). */
    json_object_set_new(doc, "state", json_string(vf_fleet_state_name()));
    if (!h || !h->probed)
        json_object_set_new(doc, "confinement_probe",
                            json_string(h && h->probe_detail[0] ? h->probe_detail : "not run"));
    return doc;
}
