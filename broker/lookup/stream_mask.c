#include "broker/lookup/stream_mask.h"

#include <stdlib.h>
#include <string.h>

int vf_stream_mask_init(vf_stream_mask *m, const char *const *needles, const size_t *lens, size_t n)
{
    memset(m, 0, sizeof *m);
    m->needles = needles;
    m->needle_lens = lens;
    m->n_needles = n;
    for (size_t i = 0; i < n; i++)
        if (lens[i] > 0 && lens[i] - 1 > m->keep)
            m->keep = lens[i] - 1;
    return 0;
}

static void mask_all(const vf_stream_mask *m, char *buf, size_t len)
{
    for (size_t i = 0; i < m->n_needles; i++) {
        size_t nl = m->needle_lens[i];
        if (nl == 0 || nl > len)
            continue;
        char *p = buf;
        size_t left = len;
        char *hit;
        while ((hit = memmem(p, left, m->needles[i], nl)) != NULL) {
            memset(hit, '*', nl);
            size_t skip = (size_t)(hit - p) + nl;
            p += skip;
            left -= skip;
        }
    }
}

int vf_stream_mask_feed(vf_stream_mask *m, const char *in, size_t len, char **out, size_t *out_len)
{
    size_t total = m->pending_len + len;
    char *buf = malloc(total ? total : 1);
    if (!buf)
        return -1;
    if (m->pending_len)
        memcpy(buf, m->pending, m->pending_len);
    if (len)
        memcpy(buf + m->pending_len, in, len);
    /* Mask over the joined bytes, so a value split across reads is caught. */
    mask_all(m, buf, total);
    size_t release = total > m->keep ? total - m->keep : 0;
    free(m->pending);
    m->pending = NULL;
    m->pending_len = total - release;
    if (m->pending_len) {
        m->pending = malloc(m->pending_len);
        if (!m->pending) {
            free(buf);
            return -1;
        }
        memcpy(m->pending, buf + release, m->pending_len);
    }
    *out = buf;
    *out_len = release;
    return 0;
}

int vf_stream_mask_finish(vf_stream_mask *m, char **out, size_t *out_len)
{
    *out = m->pending;
    *out_len = m->pending_len;
    m->pending = NULL;
    m->pending_len = 0;
    return 0;
}

void vf_stream_mask_free(vf_stream_mask *m)
{
    free(m->pending);
    m->pending = NULL;
    m->pending_len = 0;
}
