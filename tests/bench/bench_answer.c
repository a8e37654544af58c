#include "bench_answer.h"

#include <stdlib.h>
#include <string.h>

#include "broker/api/answer_blocks.h"
#include "broker/judge/json_out.h"

#define SUCCESS_MARK "\"status\":\"success\""

/* One buffer for the whole answer, as json_response.c's whole(). */
static bool write_whole(vf_json_stream *st, size_t total, bool *success)
{
    char *buf = vf_json_stream_read_all(st, total);
    if (!buf)
        return false;
    *success = strstr(buf, SUCCESS_MARK) != NULL;
    free(buf);
    return true;
}

/* One block, refilled until the end; the status is in the first block (the
 * receipt comes before the page's text). */
static bool write_blocks(vf_json_stream *st, size_t total, bool *success)
{
    char *block = calloc(1, VF_ANSWER_BLOCK + 1);
    size_t got = 0;
    while (block && got < total) {
        size_t n = vf_json_stream_read(st, block, VF_ANSWER_BLOCK);
        if (n == 0)
            break;
        if (got == 0) {
            block[n] = '\0';
            *success = strstr(block, SUCCESS_MARK) != NULL;
        }
        got += n;
    }
    bool ok = block && got == total;
    free(block);
    return ok;
}

size_t bench_answer_write(json_t *doc, bool *success)
{
    *success = false;
    size_t total = 0;
    vf_json_stream *st = vf_json_stream_new(doc, VF_ANSWER_HOLE_MIN, &total);
    if (!st)
        return 0;
    bool ok = total <= VF_ANSWER_WHOLE_MAX ? write_whole(st, total, success) : write_blocks(st, total, success);
    vf_json_stream_free(st);
    return ok ? total : 0;
}
