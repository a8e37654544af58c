/* Same-length masking of secrets in the provider stream, across read boundaries. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "broker/lookup/stream_mask.h"

static char *run(const char *input, size_t chunk)
{
    const char *needles[] = { "SECRETKEY123", "SECRETKEY123%2B" };
    size_t lens[] = { 12, 15 };
    vf_stream_mask m;
    vf_stream_mask_init(&m, needles, lens, 2);
    size_t n = strlen(input), got = 0;
    char *all = calloc(1, n + 1);
    for (size_t off = 0; off < n; off += chunk) {
        size_t take = n - off < chunk ? n - off : chunk;
        char *out;
        size_t out_len;
        cr_assert_eq(vf_stream_mask_feed(&m, input + off, take, &out, &out_len), 0);
        memcpy(all + got, out, out_len);
        got += out_len;
        free(out);
    }
    char *out;
    size_t out_len;
    vf_stream_mask_finish(&m, &out, &out_len);
    memcpy(all + got, out, out_len);
    got += out_len;
    free(out);
    vf_stream_mask_free(&m);
    cr_assert_eq(got, n, "length must be preserved (HTTP framing)");
    return all;
}

Test(stream_mask, masks_whole_and_split_values_for_every_chunk_size)
{
    const char *in = "HTTP/1.0 200 OK\r\nContent-Length: 40\r\n\r\nkey=SECRETKEY123 and SECRETKEY123%2B end";
    for (size_t chunk = 1; chunk <= strlen(in); chunk++) {
        char *out = run(in, chunk);
        cr_assert_null(strstr(out, "SECRETKEY"), "chunk %zu leaked: %s", chunk, out);
        cr_assert(strstr(out, "Content-Length: 40") != NULL);
        cr_assert(strstr(out, "************ and") != NULL, "chunk %zu: %s", chunk, out);
        free(out);
    }
}

Test(stream_mask, leaves_other_bytes_untouched)
{
    const char *in = "nothing secret here, just SECRETKEY12 (one short)";
    char *out = run(in, 7);
    cr_assert_str_eq(out, in);
    free(out);
}
