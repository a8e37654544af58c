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
} vf_tbuf;

void vf_tbuf_init(vf_tbuf *b, size_t limit);
/* Appends as much of s as fits under limit; returns false only if bytes were
 * dropped (limit reached or out of memory). */
bool vf_tbuf_append(vf_tbuf *b, const char *s, size_t n);
bool vf_tbuf_putc(vf_tbuf *b, char c);
/* Hands the bytes to the caller (malloc'd, NUL-terminated, never NULL unless
 * oom) and resets the buffer. */
char *vf_tbuf_take(vf_tbuf *b, size_t *len);
void vf_tbuf_free(vf_tbuf *b);

#endif
