#include "broker/api/admission.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 64

typedef struct tenant_count {
    struct tenant_count *next;
    char name[NAME_MAX_LEN];
    unsigned admitted;
} tenant_count;

struct vf_admission {
    pthread_mutex_t lock;
    unsigned slots, queue, admitted;
    tenant_count *tenants;   /* few tenants: a list is enough */
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

bool vf_admission_enter(vf_admission *a, const char *tenant)
{
    pthread_mutex_lock(&a->lock);
    tenant_count *t = find(a, tenant, true);
    bool ok = t && t->admitted < a->slots + a->queue &&
              a->admitted < a->slots + VF_ADMISSION_TENANT_QUEUES * a->queue;
    if (ok) {
        t->admitted++;
        a->admitted++;
    }
    pthread_mutex_unlock(&a->lock);
    return ok;
}

void vf_admission_leave(vf_admission *a, const char *tenant)
{
    pthread_mutex_lock(&a->lock);
    tenant_count *t = find(a, tenant, false);
    if (t && t->admitted) {
        t->admitted--;
        a->admitted--;
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
