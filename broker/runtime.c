#include "broker/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/fleet/fleet.h"
#include "broker/lookup/robots_cache.h"
#include "broker/lookup/robots_flight.h"
#include "ipc/ipc_frame.h"

int vf_runtime_init(vf_runtime *rt, unsigned max_workers)
{
    memset(rt, 0, sizeof *rt);
    if (vf_worker_slots_init(&rt->worker_slots, max_workers) != 0)
        return -1;
    rt->quota = vf_quota_new();
    rt->circuits = vf_circuit_registry_new(NULL);
    rt->metrics = vf_metrics_new();
    rt->robots = vf_robots_cache_new();
    rt->robots_flights = vf_robots_flights_new();
    if (!rt->quota || !rt->circuits || !rt->metrics || !rt->robots || !rt->robots_flights) {
        vf_runtime_destroy(rt);
        return -1;
    }
    return 0;
}

int vf_runtime_configure(vf_runtime *rt, const vf_config *cfg, char *err, size_t errlen)
{
    uint64_t now = (uint64_t)vf_now_ms();
    vf_circuit_params defaults;
    vf_circuit_params_default(&defaults);
    for (size_t t = 0; t < cfg->n_tenants; t++) {
        const vf_tenant_config *tc = &cfg->tenants[t];
        const char *names[VF_CIRCUIT_MAX_PROVIDERS];
        size_t n = tc->n_providers < VF_CIRCUIT_MAX_PROVIDERS ? tc->n_providers : VF_CIRCUIT_MAX_PROVIDERS;
        for (size_t p = 0; p < n; p++)
            names[p] = tc->providers[p].name;
        vf_quota_limits limits = { .max_concurrent = tc->quota_concurrent,
                                   .requests_per_minute = tc->quota_rpm,
                                   .concurrent_per_pod = !tc->quota_concurrent_set };
        if (vf_metrics_add_tenant(rt->metrics, tc->name, names, n) != 0 ||
            vf_quota_configure(rt->quota, tc->name, &limits, now) != 0 ||
            vf_circuit_configure_tenant(rt->circuits, tc->name, tc->has_circuit ? &tc->circuit : &defaults) != 0) {
            snprintf(err, errlen, "tenant %s: cannot register its runtime state", tc->name);
            return -1;
        }
    }
    if (!rt->fleet && !(rt->fleet = vf_fleet_new(rt->quota, rt->circuits, rt->metrics, cfg, err, errlen)))
        return -1;
    return vf_fleet_configure(rt->fleet, cfg, err, errlen);
}

void vf_runtime_destroy(vf_runtime *rt)
{
    vf_fleet_free(rt->fleet);
    vf_robots_cache_free(rt->robots);
    vf_robots_flights_free(rt->robots_flights);
    vf_quota_free(rt->quota);
    vf_circuit_registry_free(rt->circuits);
    vf_metrics_free(rt->metrics);
    vf_worker_slots_destroy(&rt->worker_slots);
    memset(rt, 0, sizeof *rt);
}
