/* Growable output buffer for the redaction passes. Failure is sticky so the
 * passes can stay free of error plumbing and check once at the end. */
#include "broker/judge/redact_buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/redact_marker.h"

static bool reserve(vf_rbuf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra <= b->cap - b->len)
        return true;
    if (extra > SIZE_MAX - b->len - 1)
        goto fail;
    size_t want = b->len + extra + 1;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < want)
        cap = cap > SIZE_MAX / 2 ? want : cap * 2;
    char *grown = realloc(b->data, cap);
    if (!grown)
        goto fail;
    b->data = grown;
    b->cap = cap;
    return true;
fail:
    b->failed = true;
    return false;
}

void vf_rbuf_init(vf_rbuf *b, size_t hint)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
    b->source = NULL;
    b->hint = 0;
    /* Room for the text plus a few replacements avoids most reallocs. */
    reserve(b, hint < SIZE_MAX - 256 ? hint + 256 : hint);
}

void vf_rbuf_init_borrowing(vf_rbuf *b, const char *source, size_t hint)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
    b->source = source;
    b->hint = hint;
}

bool vf_rbuf_is_borrowed(const vf_rbuf *b)
{
    return b->source != NULL && !b->failed;
}

/* The output departs from the source: copy what was borrowed. */
static void stop_borrowing(vf_rbuf *b)
{
    const char *src = b->source;
    size_t have = b->len, hint = b->hint > have ? b->hint : have;
    b->source = NULL;
    b->len = 0;
    if (reserve(b, hint < SIZE_MAX - 256 ? hint + 256 : hint) && have) {
        memcpy(b->data, src, have);
        b->len = have;
    }
}

void vf_rbuf_put(vf_rbuf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    if (b->source) {
        /* The next bytes of the source itself: still nothing to copy. */
        if ((const char *)p == b->source + b->len) {
            b->len += n;
            return;
        }
        stop_borrowing(b);
    }
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void vf_rbuf_put_redacted(vf_rbuf *b)
{
    vf_rbuf_put(b, VF_REDACTED, sizeof VF_REDACTED - 1);
}

char *vf_rbuf_finish(vf_rbuf *b, size_t *out_len)
{
    if (b->source)
        stop_borrowing(b);
    if (!reserve(b, 1)) {
        vf_rbuf_free(b);
        return NULL;
    }
    b->data[b->len] = '\0';
    if (out_len)
        *out_len = b->len;
    char *data = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return data;
}

void vf_rbuf_free(vf_rbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->source = NULL;
}
