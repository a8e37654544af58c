/* GET /v1/health: liveness plus which confinement layers workers run under
 * (measured by a probe worker at start, see broker/confinement.h). */
#ifndef VERIFETCH_HEALTH_H
#define VERIFETCH_HEALTH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    bool probed;             /* a probe worker answered at start */
    bool zygote;             /* workers come from the zygote (fast spawn) */
    uint32_t layers;         /* VF_LAYER_* the probe worker applied */
    char probe_detail[256];  /* why the probe failed, if it did */
} vf_health;

json_t *vf_health_json(const vf_health *h);

#endif
