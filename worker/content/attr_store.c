#include "worker/content/attr_store.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Big enough that chunk headers and tails are noise, small enough that a
 * page with few attributes does not pay for a large block. */
#define CHUNK_BYTES (64u << 10)

struct vf_attr_arena {
    vf_attr_arena *older;
    size_t used, cap;
    char bytes[];
};

static char *take(vf_attr_arena **arena, size_t n)
{
    vf_attr_arena *a = *arena;
    if (!a || a->cap - a->used < n) {
        size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;
        vf_attr_arena *fresh = malloc(sizeof *fresh + cap);
        if (!fresh)
            return NULL;
        fresh->cap = cap;
        fresh->used = 0;
        fresh->older = a;
        *arena = a = fresh;
    }
    char *p = a->bytes + a->used;
    a->used += n;
    return p;
}

const char *vf_attr_store(vf_attr_arena **arena, const xmlChar *const *pairs, bool *oom)
{
    *oom = false;
    if (!pairs || !pairs[0])
        return NULL;
    size_t need = 1; /* the closing empty name */
    for (size_t i = 0; pairs[i]; i += 2)
        need += strlen((const char *)pairs[i]) + 1 + (pairs[i + 1] ? strlen((const char *)pairs[i + 1]) : 0) + 1;
    char *run = take(arena, need);
    if (!run) {
        *oom = true;
        return NULL;
    }
    char *w = run;
    for (size_t i = 0; pairs[i]; i += 2) {
        for (int part = 0; part < 2; part++) {
            const char *s = pairs[i + part] ? (const char *)pairs[i + part] : "";
            size_t n = strlen(s) + 1;
            memcpy(w, s, n);
            w += n;
        }
    }
    *w = '\0';
    return run;
}

const char *vf_attr_find(const char *run, const char *name)
{
    if (!run)
        return NULL;
    while (*run) {
        const char *value = run + strlen(run) + 1;
        if (strcasecmp(run, name) == 0)
            return value;
        run = value + strlen(value) + 1;
    }
    return NULL;
}

void vf_attr_arena_free(vf_attr_arena *arena)
{
    while (arena) {
        vf_attr_arena *older = arena->older;
        free(arena);
        arena = older;
    }
}
