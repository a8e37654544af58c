/* The broker's bulk JSON writer must write exactly what jansson's compact
 * dump writes, so clients cannot tell them apart. */
#include <criterion/criterion.h>
#include <stdint.h>
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

/* Streamed in pieces of every awkward size, with the long strings left as
 * holes, the bytes are still exactly jansson's. */
static void stream_same_as_jansson(json_t *doc, size_t min_hole)
{
    char *want = json_dumps(doc, JSON_COMPACT);
    cr_assert_not_null(want);
    size_t want_len = strlen(want);
    static const size_t pieces[] = { 6, 7, 13, 64, 4096, 1 << 20 };
    for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
        size_t total = 0;
        vf_json_stream *st = vf_json_stream_new(json_incref(doc), min_hole, &total);
        cr_assert_not_null(st);
        cr_assert_eq(total, want_len, "announced %zu, jansson %zu", total, want_len);
        char *got = malloc(total + pieces[p]);
        size_t len = 0, n;
        while ((n = vf_json_stream_read(st, got + len, pieces[p])) > 0) {
            cr_assert_leq(n, pieces[p]);
            len += n;
            cr_assert_leq(len, total);
        }
        vf_json_stream_free(st);
        cr_assert_eq(len, total, "piece size %zu: %zu of %zu bytes", pieces[p], len, total);
        cr_assert_eq(memcmp(got, want, total), 0, "piece size %zu: bytes differ", pieces[p]);
        free(got);
    }
    /* Read all at once, as a small answer is: the same bytes, NUL-terminated. */
    size_t total = 0;
    vf_json_stream *st = vf_json_stream_new(json_incref(doc), min_hole, &total);
    cr_assert_not_null(st);
    char *all = vf_json_stream_read_all(st, total);
    vf_json_stream_free(st);
    cr_assert_not_null(all);
    cr_assert_str_eq(all, want, "read all at once: bytes differ");
    free(all);
    free(want);
    json_decref(doc);
}

Test(json_out, stream_in_pieces_matches_jansson)
{
    size_t n = 100000;
    char *s = malloc(n);
    cr_assert_not_null(s);
    for (size_t i = 0; i < n; i++)
        s[i] = "ab\"c\\d\ne\x01\xc3\xa9"[i % 11];
    /* A trailing partial character would not be valid UTF-8: end on a letter. */
    s[n - 1] = 'z';
    s[n - 2] = 'y';
    json_t *doc = json_pack("{s:s, s:[{s:{s:s, s:i}}, {s:s%}], s:s%}", "status", "success", "content", "json", "url",
                            "http://x/\"q\"", "n", 3, "text", s, n, "second", s, (size_t)20000);
    stream_same_as_jansson(json_incref(doc), 16 * 1024);   /* two holes */
    stream_same_as_jansson(json_incref(doc), 1);           /* every string a hole */
    stream_same_as_jansson(doc, 1 << 30);                  /* none */
    free(s);
}

Test(json_out, random_mixes_match_jansson)
{
    /* Escapes and multi-byte characters at every offset of the 16- and
     * 8-byte blocks, and in every tail. */
    static const char *const pieces[] = { "a", "bcdefgh", "\"", "\\", "\n", "\x01", "\x1f", "\x7f", " ",
                                          "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80" };
    uint32_t x = 2463534242u;
    char s[160];
    for (int round = 0; round < 3000; round++) {
        size_t len = 0;
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        size_t want = x % 120;
        while (len < want) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            const char *p = x % 4 ? pieces[x % 2] : pieces[x % (sizeof pieces / sizeof pieces[0])];
            memcpy(s + len, p, strlen(p));
            len += strlen(p);
        }
        size_t got = vf_json_escaped_len(s, len);
        char *out = malloc(vf_json_escaped_max(len) + 1);
        cr_assert_not_null(out);
        cr_assert_eq(vf_json_escape(out, s, len), got, "round %d", round);
        free(out);
        same_as_jansson(json_pack("[s%]", s, len));
    }
}
