#include "broker/broker_context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/spawn/confinement.h"
#include "broker/lookup/tls_upstream.h"

/* Every configured key, for redaction and for masking provider streams;
 * an HTTP Basic "user:password" pair too, so its base64 (the header's
 * value, which an echo may quote) is masked as a whole. */
static const char **collect_secrets(const vf_config *cfg, size_t *n)
{
    size_t cap = 0;
    for (size_t t = 0; t < cfg->n_tenants; t++)
        cap += 2 * cfg->tenants[t].n_providers;
    const char **secrets = calloc(cap ? cap : 1, sizeof *secrets);
    if (!secrets)
        return NULL;
    size_t k = 0;
    for (size_t t = 0; t < cfg->n_tenants; t++)
        for (size_t p = 0; p < cfg->tenants[t].n_providers; p++) {
            const vf_provider_config *pc = &cfg->tenants[t].providers[p];
            if (pc->secret)
                secrets[k++] = pc->secret;
            if (pc->basic_pair)
                secrets[k++] = pc->basic_pair;
        }
    *n = k;
    return secrets;
}

static void release_engines(vf_broker *b)
{
    vf_classifier_free(b->classifier);
    vf_redactor_free(b->redactor);
    vf_mask_forms_free(&b->mask);
    if (b->upstream_tls)
        SSL_CTX_free(b->upstream_tls);
}

vf_broker *vf_broker_new(vf_config *cfg, vf_runtime *rt, char *err, size_t errlen)
{
    vf_broker *b = calloc(1, sizeof *b);
    size_t n_secrets = 0;
    const char **secrets = b ? collect_secrets(cfg, &n_secrets) : NULL;
    if (!secrets) {
        free(b);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->redactor = vf_redactor_new(secrets, n_secrets, err, errlen);
    if (b->redactor && vf_mask_forms_build(&b->mask, secrets, n_secrets) != 0)
        snprintf(err, errlen, "out of memory");
    else if (b->redactor)
        b->classifier = vf_classifier_new((const char *const *)cfg->markers, cfg->n_markers, err, errlen);
    if (b->classifier)
        b->upstream_tls = vf_upstream_tls_context(cfg->ca_pem, cfg->ca_pem_len, err, errlen);
    free(secrets);
    if (b->upstream_tls && vf_runtime_configure(rt, cfg, err, errlen) != 0) {
        SSL_CTX_free(b->upstream_tls);
        b->upstream_tls = NULL;
    }
    if (!b->upstream_tls) {
        release_engines(b);
        free(b);
        return NULL;
    }
    for (size_t i = 0; i < cfg->n_required_layers; i++) {
        uint32_t bits = 0;
        if (!vf_layers_parse(cfg->required_layers[i], &bits)) {
            snprintf(err, errlen, "worker.require: unknown confinement layer '%s'", cfg->required_layers[i]);
            release_engines(b);
            free(b);
            return NULL;
        }
        b->required_layers |= bits;
    }
    b->cfg = cfg;
    b->rt = rt;
    atomic_init(&b->refs, 1);
    return b;
}

void vf_broker_ref(vf_broker *b)
{
    atomic_fetch_add(&b->refs, 1);
}

void vf_broker_unref(vf_broker *b)
{
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
        return;
    release_engines(b);
    vf_config_free(b->cfg);
    free(b->cfg);
    free(b);
}

void vf_holder_init(vf_broker_holder *h, vf_broker *initial)
{
    pthread_mutex_init(&h->lock, NULL);
    h->current = initial;
}

vf_broker *vf_holder_acquire(vf_broker_holder *h)
{
    pthread_mutex_lock(&h->lock);
    vf_broker *b = h->current;
    vf_broker_ref(b);
    pthread_mutex_unlock(&h->lock);
    return b;
}

void vf_holder_swap(vf_broker_holder *h, vf_broker *next)
{
    pthread_mutex_lock(&h->lock);
    vf_broker *old = h->current;
    h->current = next;
    pthread_mutex_unlock(&h->lock);
    vf_broker_unref(old);   /* lookups still holding it finish on it */
}

void vf_holder_destroy(vf_broker_holder *h)
{
    vf_broker_unref(h->current);
    h->current = NULL;
    pthread_mutex_destroy(&h->lock);
}
