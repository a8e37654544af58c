/* What every lookup needs from the running broker: policy and the engines
 * compiled from it. A snapshot is immutable and reference-counted, so a
 * SIGHUP reload can swap in a new one while lookups finish on the old. */
#ifndef VERIFETCH_BROKER_CONTEXT_H
#define VERIFETCH_BROKER_CONTEXT_H

#include <openssl/ssl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "broker/judge/classify.h"
#include "broker/judge/mask_forms.h"
#include "broker/judge/redact.h"
#include "broker/runtime.h"
#include "policy/config.h"

typedef struct {
    vf_config *cfg;
    vf_classifier *classifier;
    vf_redactor *redactor;
    vf_mask_forms mask;      /* key forms masked in provider responses */
    SSL_CTX *upstream_tls;   /* the credential proxy's client context (keyed providers) */
    vf_runtime *rt;          /* shared by all snapshots */
    uint32_t required_layers;/* VF_LAYER_* from worker.require */
    atomic_int refs;
} vf_broker;

/* Build a snapshot from a loaded config (takes ownership of cfg on success). */
vf_broker *vf_broker_new(vf_config *cfg, vf_runtime *rt, char *err, size_t errlen);
void vf_broker_ref(vf_broker *b);
void vf_broker_unref(vf_broker *b);

/* The current snapshot, swappable under a lock. */
typedef struct {
    pthread_mutex_t lock;
    vf_broker *current;
} vf_broker_holder;

void vf_holder_init(vf_broker_holder *h, vf_broker *initial);
vf_broker *vf_holder_acquire(vf_broker_holder *h);   /* caller unrefs */
void vf_holder_swap(vf_broker_holder *h, vf_broker *next);
void vf_holder_destroy(vf_broker_holder *h);

#endif
