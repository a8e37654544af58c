/* Origin-controlled text as models and terminals receive it (issue 13
 * items 5 and 10): model text without terminal controls or bidi controls;
 * details and failure lines printable ASCII only, bounded. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/safe_text.h"

static char *clean(const char *in)
{
    size_t n = 0;
    char *out = vf_model_text_clean(in, strlen(in), &n);
    cr_assert_not_null(out);
    cr_assert_eq(n, strlen(out));
    return out;
}

Test(safe_text, terminal_escapes_and_c1_controls_are_dropped)
{
    /* OSC 52 clipboard write, title, clear screen, CSI via C1 (U+009B) */
    char *out = clean("a\x1b]52;c;ZWNobyBwd25lZA==\x07" "b\x1b]0;title\x07" "c\x1b[2J" "d\xc2\x9b" "2Je\x7f" "f\x01g");
    cr_assert_str_eq(out, "a]52;c;ZWNobyBwd25lZA==b]0;titlec[2Jd2Jefg");
    free(out);
}

Test(safe_text, newlines_and_tabs_stay_and_other_breaks_become_newlines)
{
    char *out = clean("one\ttwo\nthree\r\nfour\rfive\xe2\x80\xa8six\xe2\x80\xa9seven");
    cr_assert_str_eq(out, "one\ttwo\nthree\nfour\nfive\nsix\nseven");
    free(out);
}

Test(safe_text, bidi_controls_are_dropped_and_other_text_kept)
{
    char *out = clean("pay \xe2\x80\xae" "0001$\xe2\x80\xac now \xe2\x81\xa6x\xe2\x81\xa9 \xe2\x80\x8f" "caf\xc3\xa9 \xe6\x97\xa5");
    cr_assert_str_eq(out, "pay 0001$ now x caf\xc3\xa9 \xe6\x97\xa5");
    free(out);
}

static void assert_printable_ascii(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        cr_assert(*p >= 0x20 && *p < 0x7f, "byte 0x%02x in '%s'", *p, s);
}

Test(safe_text, a_line_is_printable_ascii_with_everything_else_escaped)
{
    char out[256];
    const char *host = "evil\xc2\xa0host\xe2\x80\xa8LOOKUP SUCCEEDED\xe2\x80\xae\r\n\x1b[1m\xff.test";
    vf_ascii_line(host, strlen(host), out, sizeof out);
    assert_printable_ascii(out);
    cr_assert_str_eq(out, "evil\\u{A0}host\\u{2028}LOOKUP SUCCEEDED\\u{202E}\\x0D\\x0A\\x1B[1m\\xFF.test");
    vf_ascii_line("a\\b", 3, out, sizeof out);
    cr_assert_str_eq(out, "a\\\\b");
}

Test(safe_text, a_line_is_bounded_and_cut_on_a_whole_escape)
{
    char big[4000];
    for (size_t i = 0; i < sizeof big - 1; i += 3)
        memcpy(big + i, "\xe2\x80\xae", 3);
    big[3999 - 3999 % 3] = '\0';
    char out[64];
    vf_ascii_line(big, strlen(big), out, sizeof out);
    assert_printable_ascii(out);
    cr_assert_leq(strlen(out), 63);
    size_t n = strlen(out);
    cr_assert_str_eq(out + n - 3, "...");
    cr_assert_eq(out[n - 4], '}', "cut inside an escape: %s", out);
}

/* The cleaner copies runs of plain ASCII in bulk; it must write what the
 * character-by-character pass alone writes. */
static size_t ref_clean(const unsigned char *s, size_t len, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len;)
        i += vf_model_text_clean_char(s, len, i, out, &o);
    return o;
}

Test(safe_text, bulk_ascii_runs_clean_as_the_code_point_loop)
{
    static const char *const pieces[] = {
        "a", "Z", " ", "~", "\t", "\n", "\r", "\r\n", "\x01", "\x1b", "\x7f", "\xc2\x85", "\xc2\x9b",
        "\xe2\x80\xa8", "\xe2\x80\xae", "\xe2\x81\xa6", "\xd8\x9c", "\xc3\xa9", "\xe6\x97\xa5",
        "\xf0\x9f\x98\x80", "\xc3", "\x80", "\xff", "\xe2\x80", "\xed\xa0\x80", "\0",
    };
    size_t np = sizeof pieces / sizeof pieces[0];
    uint32_t x = 88172645u;
    unsigned char in[256];
    char want[256], *got;
    for (int round = 0; round < 20000; round++) {
        size_t len = 0;
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        for (size_t k = x % 30; k > 0; k--) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            const char *p = pieces[x % np];
            size_t n = p[0] ? strlen(p) : 1;
            memcpy(in + len, p, n);
            len += n;
        }
        size_t wn = ref_clean(in, len, want), gn = 0;
        got = vf_model_text_clean((const char *)in, len, &gn);
        cr_assert_not_null(got);
        cr_assert(gn == wn && memcmp(got, want, wn) == 0, "round %d: %zu vs %zu bytes", round, gn, wn);
        free(got);
    }
}

/* vf_model_text_is_clean tests eight bytes at a time: it must still say
 * "clean" exactly when cleaning changes nothing, for every byte value in
 * every lane of a word, and for mixtures of the pieces above. */
static bool clean_keeps(const unsigned char *in, size_t len)
{
    char out[64];
    return ref_clean(in, len, out) == len && memcmp(out, in, len) == 0;
}

Test(safe_text, is_clean_says_whether_cleaning_changes_anything)
{
    unsigned char in[40];
    for (size_t pos = 0; pos < 24; pos++)
        for (unsigned b = 0; b < 256; b++) {
            memset(in, 'a', sizeof in);
            in[pos] = (unsigned char)b;
            for (size_t len = pos + 1; len <= 24; len += 7) {
                /* an allocation of exactly len bytes: a read past it trips ASan */
                char *exact = malloc(len);
                cr_assert_not_null(exact);
                memcpy(exact, in, len);
                cr_assert_eq(vf_model_text_is_clean(exact, len), clean_keeps(in, len),
                             "byte 0x%02X at %zu of %zu", b, pos, len);
                free(exact);
            }
        }
    static const char *const pieces[] = {
        "abcdefgh", "a", " ", "~", "\t", "\n", "\r", "\x7f", "\x1b", "\xc2\x85", "\xe2\x80\xa8",
        "\xe2\x80\xae", "\xc3\xa9", "\xf0\x9f\x98\x80", "\xc3", "\x80",
    };
    size_t np = sizeof pieces / sizeof pieces[0];
    uint32_t x = 2463534242u;
    for (int round = 0; round < 20000; round++) {
        size_t len = 0;
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        for (size_t k = x % 6; k > 0; k--) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            /* mostly plain runs, now and then one piece that needs cleaning */
            const char *p = x % 3 ? pieces[0] : pieces[x % np];
            memcpy(in + len, p, strlen(p));
            len += strlen(p);
        }
        cr_assert_eq(vf_model_text_is_clean((const char *)in, len), clean_keeps(in, len), "round %d", round);
    }
}
