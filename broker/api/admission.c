#include "broker/api/admission.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "broker/api/drain_clock.h"
#include "ipc/ipc_frame.h"

#define NAME_MAX_LEN 64

typedef struct tenant_count {
    struct tenant_count *next;
    char name[NAME_MAX_LEN];
    unsigned admitted;
    vf_drain_clock drain;   /* this tenant's finished lookups, its refused callers */
} tenant_count;

struct vf_admission {
    pthread_mutex_t lock;
    unsigned slots, queue, admitted;
    tenant_count *tenants;   /* few tenants: a list is enough */
    vf_drain_clock drain;    /* all tenants' */
};

unsigned vf_admission_queue_for(unsigned slots)
{
    return 2 * slots > VF_ADMISSION_MIN_QUEUE ? 2 * slots : VF_ADMISSION_MIN_QUEUE;
}

static void set_limits(vf_admission *a, unsigned slots)
{
    a->slots = slots;
    a->queue = vf_admission_queue_for(slots);
}

vf_admission *vf_admission_new(unsigned slots)
{
    vf_admission *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    pthread_mutex_init(&a->lock, NULL);
    set_limits(a, slots);
    return a;
}

void vf_admission_free(vf_admission *a)
{
    if (!a)
        return;
    while (a->tenants) {
        tenant_count *t = a->tenants;
        a->tenants = t->next;
        free(t);
    }
    pthread_mutex_destroy(&a->lock);
    free(a);
}

void vf_admission_resize(vf_admission *a, unsigned slots)
{
    pthread_mutex_lock(&a->lock);
    set_limits(a, slots);
    pthread_mutex_unlock(&a->lock);
}

/* Names longer than the key share a count with their prefix: still bounded. */
static tenant_count *find(vf_admission *a, const char *tenant, bool create)
{
    for (tenant_count *t = a->tenants; t; t = t->next)
        if (strncmp(t->name, tenant, NAME_MAX_LEN - 1) == 0)
            return t;
    if (!create)
        return NULL;
    tenant_count *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    strncpy(t->name, tenant, NAME_MAX_LEN - 1);
    t->next = a->tenants;
    a->tenants = t;
    return t;
}

/* Under the lock: 0 when t may have one more lookup admitted, else the
 * Retry-After for it, booked on the clock of the limit that is full. */
static unsigned refusal(vf_admission *a, tenant_count *t, int64_t now)
{
    if (!t)
        return 1;
    if (t->admitted >= a->slots + a->queue)
        return vf_drain_clock_book(&t->drain, now);
    if (a->admitted >= a->slots + VF_ADMISSION_TENANT_QUEUES * a->queue)
        return vf_drain_clock_book(&a->drain, now);
    return 0;
}

bool vf_admission_enter(vf_admission *a, const char *tenant, unsigned *retry_after_s)
{
    int64_t now = vf_now_ms();
    pthread_mutex_lock(&a->lock);
    tenant_count *t = find(a, tenant, true);
    unsigned wait = refusal(a, t, now);
    if (wait == 0) {
        t->admitted++;
        a->admitted++;
        /* Half the queue free: whoever was refused is welcome now. */
        if (t->admitted <= a->slots + a->queue / 2)
            vf_drain_clock_clear(&t->drain, now);
        if (a->admitted <= a->slots + VF_ADMISSION_TENANT_QUEUES * a->queue / 2)
            vf_drain_clock_clear(&a->drain, now);
    }
    pthread_mutex_unlock(&a->lock);
    if (retry_after_s)
        *retry_after_s = wait;
    return wait == 0;
}

bool vf_admission_full(vf_admission *a, const char *tenant, unsigned *retry_after_s)
{
    int64_t now = vf_now_ms();
    pthread_mutex_lock(&a->lock);
    unsigned wait = refusal(a, find(a, tenant, true), now);
    pthread_mutex_unlock(&a->lock);
    if (retry_after_s)
        *retry_after_s = wait;
    return wait != 0;
}

void vf_admission_leave(vf_admission *a, const char *tenant)
{
    int64_t now = vf_now_ms();
    pthread_mutex_lock(&a->lock);
    tenant_count *t = find(a, tenant, false);
    if (t && t->admitted) {
        t->admitted--;
        a->admitted--;
        vf_drain_clock_finished(&t->drain, now);
        vf_drain_clock_finished(&a->drain, now);
    }
    pthread_mutex_unlock(&a->lock);
}

void vf_admission_stats_get(vf_admission *a, vf_admission_stats *out)
{
    pthread_mutex_lock(&a->lock);
    out->slots = a->slots;
    out->queue = a->queue;
    out->tenant_limit = a->slots + a->queue;
    out->total_limit = a->slots + VF_ADMISSION_TENANT_QUEUES * a->queue;
    out->admitted = a->admitted;
    pthread_mutex_unlock(&a->lock);
}
