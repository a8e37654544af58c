#include "broker/lookup/robots_cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/ipc_frame.h"

#define CACHE_SLOTS 1024u

typedef struct {
    char *origin;        /* "scheme://host:port", NULL = free slot */
    char *rules;         /* the file's text; NULL = everything allowed */
    size_t rules_len;
    int64_t fetched_ms;
} robots_entry;

struct vf_robots_cache {
    pthread_mutex_t lock;
    robots_entry slot[CACHE_SLOTS];
};

vf_robots_cache *vf_robots_cache_new(void)
{
    vf_robots_cache *c = calloc(1, sizeof *c);
    if (c && pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

static void entry_clear(robots_entry *e)
{
    free(e->origin);
    free(e->rules);
    memset(e, 0, sizeof *e);
}

void vf_robots_cache_free(vf_robots_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        entry_clear(&c->slot[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* Looks the origin up; fresh: *found set, the rules copied out (NULL = allow all). */
void vf_robots_cache_get(vf_robots_cache *c, const char *origin, int64_t ttl_ms, bool *found, char **rules,
                      size_t *len)
{
    *found = false;
    *rules = NULL;
    *len = 0;
    int64_t now = vf_now_ms();
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        robots_entry *e = &c->slot[i];
        if (!e->origin || strcmp(e->origin, origin) != 0)
            continue;
        if (now - e->fetched_ms < ttl_ms) {
            *found = true;
            *rules = e->rules ? malloc(e->rules_len + 1) : NULL;
            if (*rules) {
                memcpy(*rules, e->rules, e->rules_len + 1);
                *len = e->rules_len;
            } else if (e->rules) {
                *found = false;   /* out of memory: fetch again */
            }
        }
        break;
    }
    pthread_mutex_unlock(&c->lock);
}

/* Stores a copy, replacing the origin's old entry or else the oldest one. */
void vf_robots_cache_put(vf_robots_cache *c, const char *origin, const char *rules, size_t len)
{
    char *o = strdup(origin);
    char *r = rules ? malloc(len + 1) : NULL;
    if (!o || (rules && !r)) {
        free(o);
        free(r);
        return;
    }
    if (r) {
        memcpy(r, rules, len);
        r[len] = '\0';
    }
    pthread_mutex_lock(&c->lock);
    robots_entry *victim = &c->slot[0];
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        robots_entry *e = &c->slot[i];
        if (!e->origin || strcmp(e->origin, origin) == 0) {
            victim = e;
            break;
        }
        if (e->fetched_ms < victim->fetched_ms)
            victim = e;
    }
    entry_clear(victim);
    *victim = (robots_entry){ .origin = o, .rules = r, .rules_len = r ? len : 0, .fetched_ms = vf_now_ms() };
    pthread_mutex_unlock(&c->lock);
}

