#include "broker/api/json_response.h"

#include <stdint.h>
#include <stdlib.h>

#include "broker/api/answer_blocks.h"
#include "broker/judge/json_out.h"

static ssize_t produce(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos; /* MHD reads in order, from 0 to the announced size */
    size_t n = vf_json_stream_read(cls, buf, max);
    return n ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

static void release(void *cls)
{
    vf_json_stream_free(cls);
}

static struct MHD_Response *whole(vf_json_stream *st, size_t total)
{
    char *body = vf_json_stream_read_all(st, total);
    vf_json_stream_free(st);
    struct MHD_Response *r = body ? MHD_create_response_from_buffer_with_free_callback(total, body, free) : NULL;
    if (!r)
        free(body);
    return r;
}

struct MHD_Response *vf_json_response(json_t *doc, size_t *body_len)
{
    size_t total = 0;
    vf_json_stream *st = vf_json_stream_new(doc, VF_ANSWER_HOLE_MIN, &total);
    if (!st)
        return NULL;
    if (total <= VF_ANSWER_WHOLE_MAX) {
        struct MHD_Response *r = whole(st, total);
        if (r)
            *body_len = total;
        return r;
    }
    /* libmicrohttpd callocs the block with the response: a small answer (a
     * 503, an error, health) gets a block its size, not 32 KiB zeroed. */
    size_t block = total < VF_ANSWER_BLOCK ? (total ? total : 1) : VF_ANSWER_BLOCK;
    struct MHD_Response *r = MHD_create_response_from_callback(total, block, produce, st, release);
    if (!r) {
        vf_json_stream_free(st);
        return NULL;
    }
    *body_len = total;
    return r;
}
