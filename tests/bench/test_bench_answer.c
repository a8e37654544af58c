/* The floor writes its answer the way the broker does (bench_answer.c): the
 * length it reports is the dumped document's, on both sides of the
 * whole-or-blocks line, and it sees the status wherever the text is long. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "broker/api/answer_blocks.h"
#include "broker/judge/json_out.h"

#include "bench_answer.h"

/* {"status": status, "content": [{"json": {...}}, {"text": <n bytes>}]} with
 * quotes and a control byte in the text, so escaping changes its length. */
static json_t *answer_doc(const char *status, size_t text_bytes)
{
    char *text = malloc(text_bytes + 1);
    cr_assert_not_null(text);
    for (size_t i = 0; i < text_bytes; i++)
        text[i] = i % 97 == 0 ? '"' : i % 89 == 0 ? '\n' : (char)('a' + i % 26);
    text[text_bytes] = '\0';
    json_t *doc = json_pack("{s:s, s:[{s:{s:b}}, {s:s%}]}", "status", status, "content", "json", "ok", 1,
                            "text", text, text_bytes);
    free(text);
    cr_assert_not_null(doc);
    return doc;
}

static void expect_written(const char *status, size_t text_bytes, bool want_success)
{
    json_t *doc = answer_doc(status, text_bytes);
    size_t dumped_len = 0;
    char *dumped = vf_json_dump(doc, &dumped_len);
    cr_assert_not_null(dumped);
    free(dumped);
    bool success = !want_success;
    size_t len = bench_answer_write(doc, &success); /* takes doc */
    cr_assert_eq(len, dumped_len, "%zu text bytes: wrote %zu, the dump is %zu", text_bytes, len, dumped_len);
    cr_assert_eq(success, want_success, "%zu text bytes, status %s", text_bytes, status);
}

Test(bench_answer, a_small_answer_is_written_whole)
{
    expect_written("success", 1000, true);
    expect_written("error", 1000, false);
}

Test(bench_answer, a_large_answer_is_written_block_by_block)
{
    expect_written("success", 3 * VF_ANSWER_WHOLE_MAX + 123, true);
    expect_written("error", 3 * VF_ANSWER_WHOLE_MAX + 123, false);
    /* just over the line, and several blocks with a partial last one */
    expect_written("success", VF_ANSWER_WHOLE_MAX, true);
    expect_written("success", 5 * VF_ANSWER_BLOCK + 7, true);
}
