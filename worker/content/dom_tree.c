#include "worker/content/dom_tree.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "worker/content/page_map.h"
#include "worker/content/tag_class.h"

/* Chunks start small (a 10 KiB page pays for little) and double up to
 * 64 KiB: below glibc's mmap threshold, so a process that parses page after
 * page reuses its heap (1 MiB chunks went to mmap and faulted afresh every
 * page: 7x the page faults, +30% CPU in verifetch-bench-stages). */
#define FIRST_CHUNK (16u << 10)
#define LAST_CHUNK (64u << 10)
/* A large page's tree (vf_dom_map): mappings this large; a text one is
 * unmapped as soon as the renderer is past it. */
#define MAPPED_CHUNK (256u << 10)
/* Distinct unknown tag names a page may use (ids above tag_class's table
 * fill the rest of 16 bits); past it the parse stops. The tables are
 * calloc'd: a page touches the pages it uses. */
#define MAX_UNKNOWN_NAMES (65535u - VF_TAG_INDEX_MAX)
#define NAME_SLOTS 131072u

typedef struct chunk {
    struct chunk *older;
    struct chunk *newer;
    size_t used, cap;
    _Alignas(8) char bytes[];
} chunk;

typedef struct {
    chunk *head;
    chunk *oldest_held; /* mapped: chunks before it were unmapped */
    size_t next_cap;
    bool mapped;        /* chunks are mappings of their own */
} arena;

struct vf_dom {
    arena nodes; /* nodes, attribute runs, unknown names */
    arena text;
    size_t bytes, max_bytes;
    vf_node *root;
    const char **unknown;  /* [id - VF_TAG_INDEX_MAX - 1] */
    uint16_t *name_slots;  /* open addressing over unknown, id or 0 */
    size_t n_unknown;
};

vf_dom *vf_dom_new(size_t max_bytes)
{
    vf_dom *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->nodes.next_cap = d->text.next_cap = FIRST_CHUNK;
    d->max_bytes = max_bytes;
    return d;
}

/* The room a chunk asked for cap bytes gets: a mapped one fills its last
 * page (counted against the tree's bound). SIZE_MAX when it cannot be. */
static size_t room_for(const arena *a, size_t cap)
{
    if (cap > SIZE_MAX / 2)
        return SIZE_MAX;
    return a->mapped ? vf_page_map_len(sizeof(chunk) + cap) - sizeof(chunk) : cap;
}

/* A chunk of cap bytes, room_for() rounded. */
static chunk *chunk_new(const arena *a, size_t cap)
{
    chunk *c;
    if (a->mapped) {
        c = vf_page_map_resize(NULL, 0, sizeof *c + cap);
    } else {
        c = malloc(sizeof *c + cap);
    }
    if (c)
        c->cap = cap;
    return c;
}

static chunk *chunk_resize(const arena *a, chunk *c, size_t cap)
{
    chunk *bigger;
    if (a->mapped) {
        bigger = vf_page_map_resize(c, sizeof *c + c->cap, sizeof *c + cap);
    } else {
        bigger = realloc(c, sizeof *c + cap);
    }
    if (bigger)
        bigger->cap = cap;
    return bigger;
}

static void chunk_free(const arena *a, chunk *c)
{
    if (a->mapped)
        munmap(c, sizeof *c + c->cap);
    else
        free(c);
}

static void arena_free(arena *a)
{
    for (chunk *c = a->head; c;) {
        chunk *older = c->older;
        chunk_free(a, c);
        c = older;
    }
    a->head = a->oldest_held = NULL;
}

void vf_dom_free(vf_dom *d)
{
    if (!d)
        return;
    arena_free(&d->nodes);
    arena_free(&d->text);
    free(d->unknown);
    free(d->name_slots);
    free(d);
}

vf_node *vf_dom_root(const vf_dom *d)
{
    return d->root;
}

void vf_dom_set_root(vf_dom *d, vf_node *root)
{
    d->root = root;
}

size_t vf_dom_bytes(const vf_dom *d)
{
    return d->bytes;
}

/* A fresh chunk of at least need bytes at the head of a, counted against
 * the page's limit. */
static vf_dom_status grow(vf_dom *d, arena *a, size_t need)
{
    size_t cap = room_for(a, a->next_cap > need ? a->next_cap : need);
    if (cap > d->max_bytes - d->bytes) {
        cap = room_for(a, need);
        if (cap > d->max_bytes - d->bytes)
            return VF_DOM_FULL;
    }
    chunk *c = chunk_new(a, cap);
    if (!c)
        return VF_DOM_OOM;
    c->older = a->head;
    c->newer = NULL;
    if (a->head)
        a->head->newer = c;
    else
        a->oldest_held = c;
    c->used = 0;
    a->head = c;
    d->bytes += c->cap;
    if (a->next_cap < LAST_CHUNK)
        a->next_cap *= 2;
    return VF_DOM_OK;
}

static void *take(vf_dom *d, arena *a, size_t n, size_t align, vf_dom_status *st)
{
    chunk *c = a->head;
    size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
    if (!c || at > c->cap || c->cap - at < n) {
        *st = grow(d, a, n);
        if (*st != VF_DOM_OK)
            return NULL;
        c = a->head;
        at = 0;
    }
    c->used = at + n;
    *st = VF_DOM_OK;
    return c->bytes + at;
}

vf_node *vf_dom_alloc_node(vf_dom *d, size_t extra, vf_dom_status *st)
{
    vf_node *n = take(d, &d->nodes, sizeof *n + extra, 8, st);
    if (n)
        memset(n, 0, sizeof *n);
    return n;
}

vf_dom_status vf_dom_set_text(vf_dom *d, vf_node *t, const char *s, size_t n)
{
    vf_dom_status st;
    char *p = take(d, &d->text, n + 1, 1, &st);
    if (!p)
        return st;
    memcpy(p, s, n);
    p[n] = '\0';
    t->u.text = p;
    t->aux = (uint32_t)n;
    return VF_DOM_OK;
}

vf_dom_status vf_dom_append_text(vf_dom *d, vf_node *t, const char *s, size_t n)
{
    chunk *c = d->text.head;
    size_t len = t->aux;
    char *old = (char *)t->u.text;
    bool newest = c && old + len + 1 == c->bytes + c->used;
    if (newest && c->cap - c->used >= n) {
        memcpy(old + len, s, n);
        old[len + n] = '\0';
        c->used += n;
        t->aux = (uint32_t)(len + n);
        return VF_DOM_OK;
    }
    if (newest && old == c->bytes) {
        /* t is alone in the newest chunk: double it in place. */
        size_t cap = room_for(&d->text, 2 * (len + n + 1));
        if (cap > d->max_bytes - (d->bytes - c->cap))
            return VF_DOM_FULL;
        bool oldest = d->text.oldest_held == c;
        size_t old_cap = c->cap;
        chunk *bigger = chunk_resize(&d->text, c, cap);
        if (!bigger)
            return VF_DOM_OOM;
        d->bytes = d->bytes - old_cap + bigger->cap;
        d->text.head = bigger;
        if (bigger->older)
            bigger->older->newer = bigger;
        if (oldest)
            d->text.oldest_held = bigger;
        old = bigger->bytes;
        memcpy(old + len, s, n);
        old[len + n] = '\0';
        bigger->used = len + n + 1;
        t->u.text = old;
        t->aux = (uint32_t)(len + n);
        return VF_DOM_OK;
    }
    vf_dom_status st;
    char *p = take(d, &d->text, len + n + 1, 1, &st);
    if (!p)
        return st;
    memcpy(p, old, len);
    memcpy(p + len, s, n);
    p[len + n] = '\0';
    t->u.text = p;
    t->aux = (uint32_t)(len + n);
    return VF_DOM_OK;
}

static bool holds(const chunk *c, const char *p)
{
    uintptr_t at = (uintptr_t)p, from = (uintptr_t)c->bytes;
    return at >= from && at - from < c->cap;
}

void vf_dom_map(vf_dom *d, size_t page_len)
{
    if (!d->nodes.head && !d->text.head) {
        d->nodes.mapped = d->text.mapped = true;
        /* One huge page per chunk, its header included (room_for rounds). */
        d->nodes.next_cap = d->text.next_cap =
            page_len >= VF_PAGE_MAP_HUGE_MIN ? VF_PAGE_MAP_HUGE - sizeof(chunk) : MAPPED_CHUNK;
    }
}

/* The newest chunk's pages past what it holds go back (a huge page's
 * unused part is resident once its first byte is touched). */
static void trim_head(vf_dom *d, arena *a)
{
    chunk *c = a->head;
    if (!a->mapped || !c)
        return;
    size_t keep = vf_page_round(sizeof *c + c->used), had = sizeof *c + c->cap;
    if (keep < had && munmap((char *)c + keep, had - keep) == 0) {
        c->cap = keep - sizeof *c;
        d->bytes -= had - keep;
    }
}

void vf_dom_trim(vf_dom *d)
{
    trim_head(d, &d->nodes);
    trim_head(d, &d->text);
}

bool vf_dom_text_reached(vf_dom *d, const char *text)
{
    arena *a = &d->text;
    if (!a->mapped)
        return true;
    chunk *at = a->oldest_held;
    while (at && !holds(at, text))
        at = at->newer;
    if (!at)
        return false;
    for (chunk *c = a->oldest_held; c != at;) {
        chunk *newer = c->newer;
        chunk_free(a, c);
        c = newer;
    }
    at->older = NULL; /* vf_dom_free walks only what is held */
    a->oldest_held = at;
    return true;
}

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

uint16_t vf_dom_intern_name(vf_dom *d, const char *name, vf_dom_status *st)
{
    *st = VF_DOM_OK;
    if (!d->name_slots) {
        d->name_slots = calloc(NAME_SLOTS, sizeof *d->name_slots);
        d->unknown = calloc(MAX_UNKNOWN_NAMES, sizeof *d->unknown);
        if (!d->name_slots || !d->unknown) {
            *st = VF_DOM_OOM;
            return 0;
        }
    }
    uint32_t h = hash_name(name) & (NAME_SLOTS - 1);
    for (; d->name_slots[h]; h = (h + 1) & (NAME_SLOTS - 1))
        if (strcmp(d->unknown[d->name_slots[h] - VF_TAG_INDEX_MAX - 1], name) == 0)
            return d->name_slots[h];
    if (d->n_unknown >= MAX_UNKNOWN_NAMES) {
        *st = VF_DOM_FULL;
        return 0;
    }
    size_t n = strlen(name) + 1;
    char *copy = take(d, &d->nodes, n, 1, st);
    if (!copy)
        return 0;
    memcpy(copy, name, n);
    d->unknown[d->n_unknown] = copy;
    uint16_t id = (uint16_t)(VF_TAG_INDEX_MAX + 1 + d->n_unknown++);
    d->name_slots[h] = id;
    return id;
}

const char *vf_dom_name(const vf_dom *d, const vf_node *el)
{
    if (el->type != VF_NODE_ELEMENT)
        return NULL;
    if (el->name_id <= VF_TAG_INDEX_MAX)
        return vf_tag_name_at(el->name_id);
    size_t i = el->name_id - VF_TAG_INDEX_MAX - 1u;
    return i < d->n_unknown ? d->unknown[i] : NULL;
}
