/* UTF-8 sanitising and counting. Expected outputs follow the Unicode
 * "maximal subpart" replacement practice (one U+FFFD per maximal subpart). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/utf8_text.h"

#define FFFD "\xef\xbf\xbd"

static void expect_sanitized(const char *in, size_t len, const char *want, size_t want_len)
{
    size_t n = 99;
    char *out = vf_utf8_sanitize(in, len, &n);
    cr_assert_not_null(out);
    cr_expect_eq(n, want_len, "length %zu, want %zu", n, want_len);
    cr_expect_eq(memcmp(out, want, want_len < n ? want_len : n), 0);
    cr_expect_eq(out[n], '\0');
    free(out);
}

#define CHECK(in, want) expect_sanitized(in, sizeof in - 1, want, sizeof want - 1)

Test(utf8, valid_text_is_unchanged)
{
    CHECK("plain ascii", "plain ascii");
    CHECK("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80", "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80");
    CHECK("\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xef\xbf\xbf \xf0\x90\x80\x80 \xf4\x8f\xbf\xbf",
          "\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xef\xbf\xbf \xf0\x90\x80\x80 \xf4\x8f\xbf\xbf");
    CHECK("", "");
}

Test(utf8, overlongs_are_replaced)
{
    CHECK("\xc0\xaf", FFFD FFFD);
    CHECK("\xc1\xbf", FFFD FFFD);
    CHECK("\xe0\x80\xaf", FFFD FFFD FFFD);
    CHECK("\xf0\x80\x80\xaf", FFFD FFFD FFFD FFFD);
}

Test(utf8, surrogates_and_beyond_u10ffff_are_replaced)
{
    CHECK("\xed\xa0\x80", FFFD FFFD FFFD);
    CHECK("\xed\xbf\xbf", FFFD FFFD FFFD);
    CHECK("\xed\x9f\xbf", "\xed\x9f\xbf"); /* U+D7FF is fine */
    CHECK("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD);
    CHECK("\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD);
    CHECK("\xff\xfe", FFFD FFFD);
}

Test(utf8, truncated_and_stray_bytes)
{
    CHECK("\xe2\x82", FFFD);        /* truncated at end: one maximal subpart */
    CHECK("\xe2\x82" "A", FFFD "A");
    CHECK("\xf0\x9f\x98" "x", FFFD "x");
    CHECK("\x80", FFFD);
    CHECK("a\xbf\xbf" "b", "a" FFFD FFFD "b");
    CHECK("\xc3", FFFD);
}

Test(utf8, nul_bytes_are_dropped)
{
    CHECK("a\0b\0\0c", "abc");
    CHECK("\0", "");
}

Test(utf8, null_input_is_empty)
{
    size_t n = 7;
    char *out = vf_utf8_sanitize(NULL, 0, &n);
    cr_assert_not_null(out);
    cr_expect_eq(n, 0);
    cr_expect_str_eq(out, "");
    free(out);
    cr_expect_eq(vf_utf8_count(NULL, 0), 0);
}

Test(utf8, all_invalid_input_triples_in_size)
{
    size_t len = 1 << 20, n = 0;
    char *in = malloc(len);
    memset(in, 0xff, len);
    char *out = vf_utf8_sanitize(in, len, &n);
    cr_assert_not_null(out);
    cr_expect_eq(n, 3 * len);
    cr_expect_eq(vf_utf8_count(out, n), len);
    cr_expect_eq(memcmp(out + n - 3, FFFD, 3), 0);
    free(in);
    free(out);
}

static size_t naive_count(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

Test(utf8, count_matches_a_byte_by_byte_count_on_long_text)
{
    /* long enough to fold the word-at-a-time counters several times, with
     * every tail length */
    size_t cap = 100000;
    char *s = malloc(cap);
    const char *pieces[] = {"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", " "};
    size_t o = 0, k = 0;
    while (o + 4 < cap) {
        const char *p = pieces[(k * 7 + k / 3) % 5];
        memcpy(s + o, p, strlen(p));
        o += strlen(p);
        k++;
    }
    for (size_t len = o - 20; len <= o; len++)
        cr_assert_eq(vf_utf8_count(s, len), naive_count(s, len), "len %zu", len);
    free(s);
}

Test(utf8, count_code_points)
{
    cr_expect_eq(vf_utf8_count("h\xc3\xa9llo", 6), 5);
    cr_expect_eq(vf_utf8_count("\xf0\x9f\x98\x80", 4), 1);
    cr_expect_eq(vf_utf8_count("abc", 3), 3);
    cr_expect_eq(vf_utf8_count("abc", 2), 2);
}

/* Independent validator (Unicode Table 3-7, well-formed byte sequences). */
static bool valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        size_t need;
        unsigned char lo = 0x80, hi = 0xbf;
        if (b == 0)
            return false; /* sanitize drops NUL */
        if (b <= 0x7f) {
            i++;
            continue;
        }
        if (b >= 0xc2 && b <= 0xdf)
            need = 1;
        else if (b == 0xe0)
            need = 2, lo = 0xa0;
        else if ((b >= 0xe1 && b <= 0xec) || b == 0xee || b == 0xef)
            need = 2;
        else if (b == 0xed)
            need = 2, hi = 0x9f;
        else if (b == 0xf0)
            need = 3, lo = 0x90;
        else if (b >= 0xf1 && b <= 0xf3)
            need = 3;
        else if (b == 0xf4)
            need = 3, hi = 0x8f;
        else
            return false;
        if (n - i - 1 < need)
            return false;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return false;
        for (size_t k = 2; k <= need; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xbf)
                return false;
        i += need + 1;
    }
    return true;
}

Test(utf8, random_bytes_come_out_valid_and_stable)
{
    uint32_t x = 2463534242u;
    unsigned char buf[512];
    for (int round = 0; round < 2000; round++) {
        size_t len = (size_t)(round % 512);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            /* bias towards bytes that form (near-)valid sequences */
            unsigned char v = (unsigned char)x;
            buf[i] = (x >> 8) % 3 == 0 ? (unsigned char)(0x80 | (v & 0x3f)) : v;
        }
        size_t n, n2;
        char *out = vf_utf8_sanitize((const char *)buf, len, &n);
        cr_assert_not_null(out);
        cr_assert(valid_utf8((const unsigned char *)out, n), "round %d produced invalid UTF-8", round);
        char *again = vf_utf8_sanitize(out, n, &n2);
        cr_assert_eq(n2, n);
        cr_assert_eq(memcmp(again, out, n), 0, "round %d: sanitize is not idempotent", round);
        free(out);
        free(again);
    }
}

/* vf_utf8_is_clean lets callers skip a copy: it must say "clean" exactly
 * when sanitising would change nothing, for random and sanitised input. */
Test(utf8, is_clean_agrees_with_sanitize)
{
    uint32_t x = 88172645u;
    unsigned char buf[300];
    for (int round = 0; round < 4000; round++) {
        size_t len = (size_t)(round % 300);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            unsigned char v = (unsigned char)x;
            /* mostly ASCII, so the eight-byte path and its exits are exercised */
            buf[i] = (x >> 8) % 7 == 0 ? v : (unsigned char)(0x20 + v % 0x5f);
            if ((x >> 16) % 97 == 0)
                buf[i] = 0;
        }
        size_t n;
        char *out = vf_utf8_sanitize((const char *)buf, len, &n);
        cr_assert_not_null(out);
        bool unchanged = n == len && memcmp(out, buf, len) == 0;
        cr_assert_eq(vf_utf8_is_clean((const char *)buf, len), unchanged, "round %d", round);
        cr_assert(vf_utf8_is_clean(out, n), "round %d: sanitised text is not clean", round);
        free(out);
    }
    cr_assert(vf_utf8_is_clean(NULL, 0));
    cr_assert(!vf_utf8_is_clean("abcdefgh\0ijk", 12));
    cr_assert(!vf_utf8_is_clean("abcdefghij\xc3", 11));
    cr_assert(vf_utf8_is_clean("abcdefghij\xc3\xa9", 12));
}
