#include "broker/spawn/confinement.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/spawn/subuid_map.h"
#include "broker/spawn/zygote_client.h"
#include "ipc/ipc_frame.h"

#define PROBE_TIMEOUT_MS 10000

/* Fits the socket buffer, so it can be written before the worker even runs. */
static const char canned[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             "Content-Length: 5\r\nConnection: close\r\n\r\nprobe";

bool vf_worker_as_clamped(uint64_t max_body, uint64_t *hard, uint64_t *wanted)
{
    struct rlimit rl;
    *wanted = vf_worker_as_bytes(max_body);
    *hard = 0;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_max == RLIM_INFINITY)
        return false;
    *hard = (uint64_t)rl.rlim_max;
    return *hard < *wanted;
}

void vf_confinement_probe(const vf_worker_spec *spec, vf_confinement_report *out)
{
    vf_confinement_probe_limits(spec, 4096, PROBE_TIMEOUT_MS, out);
}

void vf_confinement_probe_limits(const vf_worker_spec *spec, uint64_t max_body, uint32_t timeout_ms,
                                 vf_confinement_report *out)
{
    memset(out, 0, sizeof *out);
    uid_t broker_uid = geteuid(), sub;
    out->worker_uid = broker_uid == 0 ? VF_WORKER_NOBODY : (unsigned)broker_uid;
    if (vf_subuid_worker_uid(&sub))
        out->worker_uid = (unsigned)sub;
    out->uid_separated = out->worker_uid != (unsigned)broker_uid;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        send(sv[0], canned, sizeof canned - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof canned - 1)) {
        snprintf(out->detail, sizeof out->detail, "probe channel could not be set up");
        return;
    }
    vf_job job = { .url = (char *)"http://confinement.probe/", .connect_ip = (char *)"127.0.0.1",
                   .port = 80, .timeout_ms = timeout_ms, .max_body = max_body,
                   .mode = VF_MODE_RAW };
    /* Report, do not refuse: the caller compares against what it requires. */
    vf_worker_spec probe = { .path = spec->path };
    out->zygote = vf_zygote_serves(spec->path);
    vf_result res;
    char detail[200];
    int64_t t0 = vf_now_ms();
    int rc = vf_worker_run(&probe, &job, sv[1], t0 + PROBE_TIMEOUT_MS, &res, detail, sizeof detail);
    out->spawn_ms = (double)(vf_now_ms() - t0);
    close(sv[0]);
    close(sv[1]);
    if (rc != 0) {
        snprintf(out->detail, sizeof out->detail, "probe worker failed: %s", detail);
    } else if (res.transport_error || res.http_status != 200 || res.text_len != 5 ||
               memcmp(res.text, "probe", 5) != 0) {
        snprintf(out->detail, sizeof out->detail, "probe worker answered wrongly: %.32s %.200s",
                 res.transport_error ? res.transport_error : "status",
                 res.detail ? res.detail : "");
    } else {
        out->ran = true;
        out->layers = res.layers;
    }
    if (rc == 0)
        vf_result_free(&res);
    out->missing = spec->required_layers & ~out->layers;
    vf_layers_describe(out->layers, out->layer_names, sizeof out->layer_names);
    if (out->ran && out->missing) {
        char names[160];
        vf_layers_describe(out->missing, names, sizeof names);
        snprintf(out->detail, sizeof out->detail, "required confinement not available: %s", names);
    }
}

bool vf_layers_parse(const char *name, uint32_t *bits)
{
    *bits = 0;
    if (strcmp(name, "namespaces") == 0)
        *bits = VF_LAYER_NAMESPACES;
    else if (strcmp(name, "all") == 0)
        *bits = VF_LAYER_ALL;
    for (uint32_t i = 0; !*bits && i < VF_LAYER_COUNT; i++)
        if (strcmp(name, vf_layer_name(1u << i)) == 0)
            *bits = 1u << i;
    return *bits != 0;
}
