/* GET /v1/health: liveness plus which confinement layers workers run under. */
#ifndef VERIFETCH_HEALTH_H
#define VERIFETCH_HEALTH_H

#include <jansson.h>
#include <stdbool.h>

typedef struct {
    bool probed;             /* a probe worker ran at start */
    unsigned layers;         /* bitmask of active layers (see vf_health_layer_names) */
    char probe_detail[256];  /* why the probe failed, if it did */
} vf_health;

extern const char *const vf_health_layer_names[];   /* index = bit; NULL-terminated */

json_t *vf_health_json(const vf_health *h);

#endif
