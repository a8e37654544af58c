/* The broker's bulk JSON writer must write exactly what jansson's compact
 * dump writes, so clients cannot tell them apart. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/json_out.h"

static void same_as_jansson(json_t *doc)
{
    char *want = json_dumps(doc, JSON_COMPACT);
    size_t len = 0;
    char *got = vf_json_dump(doc, &len);
    cr_assert_not_null(want);
    cr_assert_not_null(got);
    cr_assert_eq(len, strlen(want), "length %zu vs jansson %zu", len, strlen(want));
    cr_assert_str_eq(got, want);
    free(want);
    free(got);
    json_decref(doc);
}

Test(json_out, every_type_and_key_order)
{
    same_as_jansson(json_pack("{s:s, s:i, s:I, s:b, s:b, s:n, s:f, s:[i, s, {}], s:{}, s:[]}", "z", "last first",
                              "a", -7, "big", (json_int_t)9007199254740993LL, "t", 1, "f", 0, "nil", "real", 0.1,
                              "arr", 1, "two", "empty", "e2", "e3"));
}

Test(json_out, every_byte_that_needs_escaping)
{
    char all[256];
    for (int i = 0; i < 128; i++)
        all[i] = (char)(i + 1 == 128 ? 0x7f : i + 1);
    /* Valid multi-byte UTF-8 after the ASCII range: copied as is. */
    const char *utf8 = "caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80 / \" \\";
    memcpy(all + 127, utf8, strlen(utf8));
    size_t n = 127 + strlen(utf8);
    same_as_jansson(json_pack("{s:s%}", "k\"\n\x01", all, n));
}

Test(json_out, escapes_at_every_word_offset)
{
    /* An escape at each position of an 8-byte word, in a long run. */
    for (int pos = 0; pos < 24; pos++)
        for (int c = 0; c < 3; c++) {
            char s[64];
            memset(s, 'x', sizeof s);
            s[pos] = "\"\\\x1f"[c];
            same_as_jansson(json_pack("[s%]", s, sizeof s));
        }
}

Test(json_out, long_text_across_slices)
{
    /* Larger than one slice, with escapes on both sides of the boundary and
     * multi-byte characters straddling it. */
    size_t n = 3 * 64 * 1024 + 17;
    char *s = malloc(n);
    cr_assert_not_null(s);
    for (size_t i = 0; i < n; i++)
        s[i] = (char)('a' + i % 26);
    for (size_t i = 0; i + 3 < n; i += 997)
        memcpy(s + i, "\xe2\x82\xac", 3);
    for (size_t i = 5; i < n; i += 4099)
        s[i] = (i / 4099) % 2 ? '\n' : '"';
    s[64 * 1024 - 1] = '\x02';
    s[64 * 1024] = '\\';
    /* An all-control slice: the worst case for the reserved room. */
    memset(s + 64 * 1024 * 2, '\x01', 64 * 1024);
    same_as_jansson(json_pack("{s:[{s:s%}]}", "content", "text", s, n));
    free(s);
}

Test(json_out, embedded_nul_and_empty)
{
    same_as_jansson(json_pack("[s%]", "a\0b", (size_t)3));
    same_as_jansson(json_pack("{s:s}", "", ""));
    same_as_jansson(json_object());
}
