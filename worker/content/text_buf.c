#include "worker/content/text_buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "worker/content/page_map.h"

void vf_tbuf_init(vf_tbuf *b, size_t limit)
{
    memset(b, 0, sizeof *b);
    b->limit = limit;
}

void vf_tbuf_init_mapped(vf_tbuf *b, size_t limit, size_t expect)
{
    vf_tbuf_init(b, limit);
    b->mapped = true;
    size_t cap = vf_page_map_len((expect < limit ? expect : limit) + 1);
    b->data = cap != SIZE_MAX ? vf_page_map_resize(NULL, 0, cap) : NULL;
    if (b->data)
        b->cap = cap;
}

bool vf_tbuf_move_to_mapping(vf_tbuf *b, size_t expect)
{
    if (b->mapped || b->oom)
        return false;
    vf_tbuf moved;
    vf_tbuf_init_mapped(&moved, b->limit, expect > b->len ? expect : b->len);
    if (!moved.data)
        return false;
    if (b->len)
        memcpy(moved.data, b->data, b->len);
    moved.len = b->len;
    moved.data[moved.len] = '\0';
    moved.truncated = b->truncated;
    free(b->data);
    *b = moved;
    return true;
}

void vf_tbuf_release_before(vf_tbuf *b, size_t upto)
{
    if (!b->mapped || !b->data || upto > b->len + 1)
        return;
    upto &= ~(vf_page_size() - 1);
    /* Only the pages not given back yet: the hole before them is the
     * kernel's again and may hold someone else's mapping now. */
    if (upto > b->released && munmap(b->data + b->released, upto - b->released) == 0)
        b->released = upto;
}

static bool reserve(vf_tbuf *b, size_t need)
{
    if (need + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need + 1)
        cap = cap > SIZE_MAX / 2 ? need + 1 : cap * 2;
    /* Never allocate much past the ceiling just because doubling overshot it. */
    if (cap > b->limit + 1 && need + 1 <= b->limit + 1)
        cap = b->limit + 1;
    if (b->mapped && b->released != 0) {
        b->oom = true; /* never grown once a prefix is gone */
        return false;
    }
    char *p = b->mapped ? vf_page_map_resize(b->data, b->cap, cap = vf_page_map_len(cap)) : realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

bool vf_tbuf_append(vf_tbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return false;
    bool whole = true;
    if (n > b->limit - b->len) {
        n = b->limit - b->len;
        b->truncated = true;
        whole = false;
    }
    if (!reserve(b, b->len + n))
        return false;
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return whole;
}

bool vf_tbuf_putc(vf_tbuf *b, char c)
{
    return vf_tbuf_append(b, &c, 1);
}

char *vf_tbuf_take(vf_tbuf *b, size_t *len)
{
    if (b->oom || b->mapped) {
        vf_tbuf_free(b);
        *len = 0;
        return NULL;
    }
    if (!reserve(b, b->len)) {
        vf_tbuf_free(b);
        *len = 0;
        return NULL;
    }
    b->data[b->len] = '\0';
    char *out = b->data;
    *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return out;
}

char *vf_tbuf_take_any(vf_tbuf *b, size_t *len, size_t *map_len)
{
    *map_len = 0;
    if (!b->mapped)
        return vf_tbuf_take(b, len);
    if (b->oom || b->released != 0 || !reserve(b, b->len)) {
        vf_tbuf_free(b);
        *len = 0;
        return NULL;
    }
    char *out = b->data;
    *len = b->len;
    *map_len = b->cap;
    b->data = NULL;
    b->len = b->cap = 0;
    return out;
}

void vf_tbuf_unmap_taken(char *data, size_t map_len)
{
    if (map_len)
        munmap(data, map_len);
    else
        free(data);
}

void vf_tbuf_free(vf_tbuf *b)
{
    if (b->mapped && b->data && b->cap > b->released)
        munmap(b->data + b->released, b->cap - b->released); /* never the given-back prefix */
    else if (!b->mapped)
        free(b->data);
    b->released = 0;
    b->data = NULL;
    b->len = b->cap = 0;
}

void vf_tbuf_free_cb(void *ctx)
{
    vf_tbuf_free(ctx);
}

void vf_tbuf_release_before_cb(void *ctx, size_t upto)
{
    vf_tbuf_release_before(ctx, upto);
}
