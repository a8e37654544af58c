/* What every lookup needs from the running broker: policy and the compiled
 * engines. Immutable while lookups run (a reload swaps the whole thing). */
#ifndef VERIFETCH_BROKER_CONTEXT_H
#define VERIFETCH_BROKER_CONTEXT_H

#include <openssl/ssl.h>
#include <semaphore.h>

#include "broker/classify.h"
#include "broker/mask_forms.h"
#include "broker/redact.h"
#include "policy/config.h"

typedef struct {
    vf_config *cfg;
    vf_classifier *classifier;
    vf_redactor *redactor;
    sem_t worker_slots;      /* caps live workers at cfg->max_concurrent */
    vf_mask_forms mask;      /* key forms masked in provider responses */
    SSL_CTX *upstream_tls;   /* the credential proxy's client context (keyed providers) */
} vf_broker;

/* Build engines from a loaded config (takes ownership of cfg on success). */
int vf_broker_init(vf_broker *b, vf_config *cfg, char *err, size_t errlen);
void vf_broker_destroy(vf_broker *b);

#endif
