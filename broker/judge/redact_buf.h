/* Growable output buffer shared by the redaction passes (private). */
#ifndef VERIFETCH_REDACT_BUF_H
#define VERIFETCH_REDACT_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; every later put is a no-op */
    /* Borrowing: while everything put so far is source[0..len) in order,
     * nothing is copied (data stays NULL); the first other put copies it. */
    const char *source;
    size_t hint;
} vf_rbuf;

/* hint: expected final length (the input length is a good guess). */
void vf_rbuf_init(vf_rbuf *b, size_t hint);
/* An empty buffer that borrows source (of about hint bytes) until the
 * output departs from it. */
void vf_rbuf_init_borrowing(vf_rbuf *b, const char *source, size_t hint);
/* True while the contents are still source[0..len) itself (no copy made). */
bool vf_rbuf_is_borrowed(const vf_rbuf *b);
void vf_rbuf_put(vf_rbuf *b, const void *p, size_t n);
void vf_rbuf_put_redacted(vf_rbuf *b);
/* NUL-terminates and hands the bytes over (NULL if anything failed). */
char *vf_rbuf_finish(vf_rbuf *b, size_t *out_len);
void vf_rbuf_free(vf_rbuf *b);

#endif
