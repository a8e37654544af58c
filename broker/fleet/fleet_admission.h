/* A lookup's one round trip to the shared store before it fetches: the
 * tenant's quota, the cache's value-or-lock and the circuits it is about to
 * ask about, in one script. Each part is optional; a refused quota skips the
 * rest (no lock taken, nothing read). */
#ifndef VERIFETCH_FLEET_ADMISSION_H
#define VERIFETCH_FLEET_ADMISSION_H

#include "broker/fleet/shared_circuit.h"
#include "broker/fleet/shared_quota.h"
#include "broker/fleet/state_store.h"

typedef struct {
    /* Asked (NULL / 0 = leave that part out). */
    const vf_shared_quota_call *quota;
    const char *key, *lock_key;                       /* the cache claim */
    uint64_t lock_ms;
    const char *tenant, *host;                        /* circuits: host normalised, or NULL */
    const char *providers[VF_CIRCUIT_PEEK_MAX];
    unsigned n_providers;
    /* Answered by vf_admission_run. */
    long long quota_code, quota_retry, quota_granted; /* as vf_quota's reply */
    long long claim_tag;                              /* as vf_claim's tag; -1 = not asked */
    const redisReply *claim_value;                    /* the claimed value (in reply), or NULL */
    redisReply *reply;
    int scopes[VF_CIRCUIT_PEEK_MAX];                  /* circuit scopes asked per provider */
    vf_state_ticket ticket;                           /* sent ahead (vf_admission_send) */
} vf_admission;

/* 0: the store answered (the peeks are in place for this thread's circuit
 * admits); -1: it is unavailable, nothing was taken. */
int vf_admission_run(vf_state *st, vf_admission *a);
/* The same trip in two halves, so the caller works while it travels:
 * send writes the script now when the connection is free (true; then wait
 * must follow, on any thread), else false and nothing was sent. wait is
 * vf_admission_run's answer; a script the server did not know yet is run
 * again there, so it always runs once. */
bool vf_admission_send(vf_state *st, vf_admission *a);
int vf_admission_wait(vf_state *st, vf_admission *a);
/* Frees the reply (claim_value with it). */
void vf_admission_done(vf_admission *a);

#endif
