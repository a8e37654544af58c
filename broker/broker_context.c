#include "broker/broker_context.h"

#include "broker/tls_upstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vf_broker_init(vf_broker *b, vf_config *cfg, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    /* Every configured key is scrubbed from everything the broker emits. */
    size_t n_secrets = 0;
    for (size_t t = 0; t < cfg->n_tenants; t++)
        for (size_t p = 0; p < cfg->tenants[t].n_providers; p++)
            if (cfg->tenants[t].providers[p].secret)
                n_secrets++;
    const char **secrets = calloc(n_secrets ? n_secrets : 1, sizeof *secrets);
    if (!secrets) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t t = 0; t < cfg->n_tenants; t++)
        for (size_t p = 0; p < cfg->tenants[t].n_providers; p++)
            if (cfg->tenants[t].providers[p].secret)
                secrets[k++] = cfg->tenants[t].providers[p].secret;
    b->redactor = vf_redactor_new(secrets, n_secrets, err, errlen);
    int masked = b->redactor ? vf_mask_forms_build(&b->mask, secrets, n_secrets) : -1;
    free(secrets);
    if (!b->redactor)
        return -1;
    if (masked != 0) {
        vf_redactor_free(b->redactor);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->classifier = vf_classifier_new((const char *const *)cfg->markers, cfg->n_markers, err, errlen);
    if (!b->classifier) {
        vf_redactor_free(b->redactor);
        return -1;
    }
    b->upstream_tls = vf_upstream_tls_context(cfg->ca_pem, cfg->ca_pem_len, err, errlen);
    if (!b->upstream_tls) {
        vf_classifier_free(b->classifier);
        vf_redactor_free(b->redactor);
        return -1;
    }
    sem_init(&b->worker_slots, 0, cfg->max_concurrent);
    b->cfg = cfg;
    return 0;
}

void vf_broker_destroy(vf_broker *b)
{
    vf_classifier_free(b->classifier);
    vf_redactor_free(b->redactor);
    vf_mask_forms_free(&b->mask);
    sem_destroy(&b->worker_slots);
    if (b->upstream_tls)
        SSL_CTX_free(b->upstream_tls);
    if (b->cfg) {
        vf_config_free(b->cfg);
        free(b->cfg);
    }
    memset(b, 0, sizeof *b);
}
