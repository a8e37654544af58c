#include "broker/health.h"

const char *const vf_health_layer_names[] = {
    "seccomp", "no_new_privs", "rlimits", "uid_drop", "user_ns", "net_ns", "pid_ns", "ipc_ns", "mount_ns",
    "landlock", NULL,
};

json_t *vf_health_json(const vf_health *h)
{
    json_t *layers = json_object();
    for (unsigned i = 0; vf_health_layer_names[i]; i++)
        json_object_set_new(layers, vf_health_layer_names[i], json_boolean(h && h->probed && (h->layers >> i) & 1u));
    json_t *doc = json_pack("{s:s, s:o}", "status", "ok", "confinement", layers);
    if (h && h->probed == false)
        json_object_set_new(doc, "confinement_probe", json_string(h->probe_detail[0] ? h->probe_detail : "not run"));
    return doc;
}
