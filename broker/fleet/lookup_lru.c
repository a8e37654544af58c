#include "broker/fleet/lookup_lru.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 4096u
#define NAME_MAX_LEN 64u

typedef struct entry {
    struct entry *next_in_bucket;
    struct entry *newer, *older;     /* the tenant's recency list */
    struct tenant_list *owner;
    char *key;
    char *value;
    size_t value_len;
    uint64_t fetched_at, expires_at;
} entry;

typedef struct tenant_list {
    char name[NAME_MAX_LEN + 1];
    entry *newest, *oldest;
    size_t count, bytes;
    struct tenant_list *next;
} tenant_list;

struct vf_lru {
    pthread_mutex_t lock;
    entry *bucket[BUCKETS];
    tenant_list *tenants;
};

vf_lru *vf_lru_new(void)
{
    vf_lru *c = calloc(1, sizeof *c);
    if (c)
        pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void entry_free(entry *e)
{
    free(e->key);
    free(e->value);
    free(e);
}

void vf_lru_free(vf_lru *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < BUCKETS; i++)
        for (entry *e = c->bucket[i], *next; e; e = next) {
            next = e->next_in_bucket;
            entry_free(e);
        }
    for (tenant_list *t = c->tenants, *next; t; t = next) {
        next = t->next;
        free(t);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603ull;   /* FNV-1a; keys are already SHA-256 hex */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h % BUCKETS;
}

static tenant_list *tenant_of(vf_lru *c, const char *name, int create)
{
    for (tenant_list *t = c->tenants; t; t = t->next)
        if (strcmp(t->name, name) == 0)
            return t;
    if (!create || strlen(name) > NAME_MAX_LEN)
        return NULL;
    tenant_list *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    strcpy(t->name, name);
    t->next = c->tenants;
    c->tenants = t;
    return t;
}

static void unlink_recency(entry *e)
{
    tenant_list *t = e->owner;
    if (e->newer)
        e->newer->older = e->older;
    else
        t->newest = e->older;
    if (e->older)
        e->older->newer = e->newer;
    else
        t->oldest = e->newer;
    e->newer = e->older = NULL;
}

static void push_newest(entry *e)
{
    tenant_list *t = e->owner;
    e->older = t->newest;
    e->newer = NULL;
    if (t->newest)
        t->newest->newer = e;
    t->newest = e;
    if (!t->oldest)
        t->oldest = e;
}

static void remove_entry(vf_lru *c, entry *e)
{
    entry **pp = &c->bucket[hash(e->key)];
    while (*pp && *pp != e)
        pp = &(*pp)->next_in_bucket;
    if (*pp)
        *pp = e->next_in_bucket;
    unlink_recency(e);
    e->owner->count--;
    e->owner->bytes -= e->value_len;
    entry_free(e);
}

static entry *find(vf_lru *c, const char *key, const tenant_list *t)
{
    for (entry *e = c->bucket[hash(key)]; e; e = e->next_in_bucket)
        if (e->owner == t && strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

char *vf_lru_get(vf_lru *c, const char *tenant, const char *key, uint64_t now_ms, uint64_t max_age_ms,
                 uint64_t *fetched_at_ms)
{
    if (!c || !tenant || !key)
        return NULL;
    char *copy = NULL;
    pthread_mutex_lock(&c->lock);
    tenant_list *t = tenant_of(c, tenant, 0);
    entry *e = t ? find(c, key, t) : NULL;
    if (e && now_ms >= e->expires_at) {
        remove_entry(c, e);
        e = NULL;
    }
    if (e && (now_ms < e->fetched_at || now_ms - e->fetched_at <= max_age_ms)) {
        unlink_recency(e);
        push_newest(e);
        copy = malloc(e->value_len + 1);
        if (copy) {
            memcpy(copy, e->value, e->value_len + 1);
            if (fetched_at_ms)
                *fetched_at_ms = e->fetched_at;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return copy;
}

void vf_lru_put(vf_lru *c, const char *tenant, unsigned max_entries, const char *key, const char *value,
                size_t value_len, uint64_t fetched_at_ms, uint64_t expires_at_ms)
{
    if (!c || !tenant || !key || !value || value_len > VF_LRU_MAX_VALUE || max_entries == 0)
        return;
    entry *e = calloc(1, sizeof *e);
    if (!e)
        return;
    e->key = strdup(key);
    e->value = malloc(value_len + 1);
    if (!e->key || !e->value) {
        entry_free(e);
        return;
    }
    memcpy(e->value, value, value_len);
    e->value[value_len] = '\0';
    e->value_len = value_len;
    e->fetched_at = fetched_at_ms;
    e->expires_at = expires_at_ms;
    pthread_mutex_lock(&c->lock);
    tenant_list *t = tenant_of(c, tenant, 1);
    if (!t) {
        pthread_mutex_unlock(&c->lock);
        entry_free(e);
        return;
    }
    entry *old = find(c, key, t);
    if (old)
        remove_entry(c, old);
    while (t->oldest && (t->count >= max_entries || t->bytes + value_len > VF_LRU_MAX_TENANT_BYTES))
        remove_entry(c, t->oldest);
    e->owner = t;
    size_t b = hash(key);
    e->next_in_bucket = c->bucket[b];
    c->bucket[b] = e;
    push_newest(e);
    t->count++;
    t->bytes += value_len;
    pthread_mutex_unlock(&c->lock);
}

size_t vf_lru_count(vf_lru *c, const char *tenant)
{
    if (!c)
        return 0;
    pthread_mutex_lock(&c->lock);
    tenant_list *t = tenant_of(c, tenant, 0);
    size_t n = t ? t->count : 0;
    pthread_mutex_unlock(&c->lock);
    return n;
}
