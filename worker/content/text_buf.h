/* A growable byte buffer with a hard ceiling, shared by the fetcher (body) and
 * the extractors (text). Everything that grows from page bytes goes through it. */
#ifndef VERIFETCH_WORKER_TEXT_BUF_H
#define VERIFETCH_WORKER_TEXT_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *data;      /* always NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
    size_t limit;    /* len never exceeds this */
    bool truncated;  /* an append was cut short by limit */
    bool oom;        /* an allocation failed; later appends are ignored */
    bool mapped;     /* data is a mapping of its own (vf_tbuf_init_mapped) */
    size_t released; /* mapped: bytes [0, released) are unmapped already */
} vf_tbuf;

void vf_tbuf_init(vf_tbuf *b, size_t limit);
/* The same, but the bytes live in a mapping of their own, first sized for
 * expect bytes, so that a reader done with a prefix gives those pages back to
 * the kernel at once (vf_tbuf_release_before) instead of holding the whole
 * page until the end. Such a buffer is never taken, only freed. */
void vf_tbuf_init_mapped(vf_tbuf *b, size_t limit, size_t expect);
/* Moves a heap buffer's bytes into a mapping of its own sized for expect
 * bytes (a body that turned out large gets huge pages, page_map.h); from
 * then on it is a mapped buffer. False (buffer unchanged) if it cannot. */
bool vf_tbuf_move_to_mapping(vf_tbuf *b, size_t expect);
/* Mapped buffers: unmaps the whole pages before offset upto; those bytes
 * are never read again. No-op for other buffers. No appends after it.
 * A range once given back is never unmapped again: another mapping (a
 * thread's, or malloc's) may live there by then. */
void vf_tbuf_release_before(vf_tbuf *b, size_t upto);
/* Appends as much of s as fits under limit; returns false only if bytes were
 * dropped (limit reached or out of memory). */
bool vf_tbuf_append(vf_tbuf *b, const char *s, size_t n);
bool vf_tbuf_putc(vf_tbuf *b, char c);
/* Hands the bytes to the caller (malloc'd, NUL-terminated, never NULL unless
 * oom) and resets the buffer. Not for mapped buffers (NULL). */
char *vf_tbuf_take(vf_tbuf *b, size_t *len);
/* vf_tbuf_take for any buffer: a mapped one (nothing given back yet) hands
 * over its mapping and sets *map_len to its length (release with
 * vf_tbuf_unmap_taken); a heap one sets *map_len to 0 (free()). */
char *vf_tbuf_take_any(vf_tbuf *b, size_t *len, size_t *map_len);
/* Gives back what vf_tbuf_take_any handed over: free() or munmap. */
void vf_tbuf_unmap_taken(char *data, size_t map_len);
void vf_tbuf_free(vf_tbuf *b);
/* vf_tbuf_free and vf_tbuf_release_before shaped as callbacks (ctx is the
 * buffer), for an owner that lets a reader tell it when its bytes are done. */
void vf_tbuf_free_cb(void *ctx);
void vf_tbuf_release_before_cb(void *ctx, size_t upto);

#endif
