/* Admission in front of the worker slots: a lookup is admitted (and gets a
 * thread) only while its tenant has fewer than slots + queue lookups admitted
 * and the daemon fewer than slots + VF_ADMISSION_TENANT_QUEUES * queue; past
 * that the caller answers 503 with Retry-After at once, so an overload is an
 * HTTP answer, never a connect error or a backlog wait. The Retry-After is
 * the queue's drain time for that caller, not a fixed second. */
#ifndef VERIFETCH_ADMISSION_H
#define VERIFETCH_ADMISSION_H

#include <stdbool.h>

#define VF_ADMISSION_TENANT_QUEUES 4u   /* the daemon-wide queue holds this many tenants' queues */
#define VF_ADMISSION_MIN_QUEUE 16u

typedef struct vf_admission vf_admission;

typedef struct {
    unsigned slots;            /* worker.max_concurrent */
    unsigned queue;            /* per tenant, beyond the slots */
    unsigned tenant_limit;     /* slots + queue */
    unsigned total_limit;
    unsigned admitted;         /* now, all tenants */
} vf_admission_stats;

/* The per-tenant queue for a number of slots: twice the slots, at least VF_ADMISSION_MIN_QUEUE. */
unsigned vf_admission_queue_for(unsigned slots);
vf_admission *vf_admission_new(unsigned slots);
void vf_admission_free(vf_admission *a);
/* Reload: new limits for lookups admitted from now on. */
void vf_admission_resize(vf_admission *a, unsigned slots);
/* true = admitted (call vf_admission_leave when done); false with
 * *retry_after_s (may be NULL) = how long the caller should wait, from the
 * rate admitted lookups finish at and the callers already refused
 * (broker/api/drain_clock.h). */
bool vf_admission_enter(vf_admission *a, const char *tenant, unsigned *retry_after_s);
/* Whether the tenant would be refused now, asked before its request body is
 * read; true books *retry_after_s like a refused vf_admission_enter. */
bool vf_admission_full(vf_admission *a, const char *tenant, unsigned *retry_after_s);
void vf_admission_leave(vf_admission *a, const char *tenant);
void vf_admission_stats_get(vf_admission *a, vf_admission_stats *out);

#endif
