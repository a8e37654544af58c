/* Same-length masking of secret values in a byte stream. The credential proxy
 * runs every provider response through this before the worker sees a byte, so
 * a provider that echoes our key back (request headers in an error page, say)
 * still cannot put it into the worker's memory. Same length keeps HTTP framing
 * (Content-Length) intact; the proxy asks for identity encoding over HTTP/1.0
 * so no compression or chunk framing can split or hide a value. */
#ifndef VERIFETCH_STREAM_MASK_H
#define VERIFETCH_STREAM_MASK_H

#include <stddef.h>

typedef struct {
    const char *const *needles;   /* not owned */
    const size_t *needle_lens;
    size_t n_needles;
    size_t keep;                  /* longest needle - 1: bytes held back between chunks */
    char *pending;                /* held-back tail */
    size_t pending_len;
} vf_stream_mask;

int vf_stream_mask_init(vf_stream_mask *m, const char *const *needles, const size_t *lens, size_t n);

/* Append in[0..len) and return, in *out (malloc'd), the bytes that are now
 * safe to release; *out_len may be 0. Returns -1 on allocation failure. */
int vf_stream_mask_feed(vf_stream_mask *m, const char *in, size_t len, char **out, size_t *out_len);

/* Release the held-back tail at end of stream. */
int vf_stream_mask_finish(vf_stream_mask *m, char **out, size_t *out_len);

void vf_stream_mask_free(vf_stream_mask *m);

#endif
