/* vf_needle_scan answers what one memmem per needle answers: on random text
 * over a small alphabet (so prefixes collide often), with needles planted at
 * the start, the very end and across each other, and with more needles than
 * one 64-needle group. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "worker/content/needle_scan.h"

static void expect_memmem(const char *hay, size_t n, const char *const *needles, size_t k)
{
    bool found[200] = { false };
    vf_needle_scan(hay, n, needles, k, found);
    for (size_t i = 0; i < k; i++) {
        bool want = memmem(hay, n, needles[i], strlen(needles[i])) != NULL;
        cr_assert_eq(found[i], want, "needle %zu '%s' in %zu bytes: scan %d, memmem %d", i, needles[i], n,
                     found[i], want);
    }
}

static char *random_word(unsigned *seed, size_t min, size_t max)
{
    size_t len = min + (size_t)rand_r(seed) % (max - min + 1);
    char *w = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        w[i] = "abc<=\""[rand_r(seed) % 6];
    w[len] = '\0';
    return w;
}

Test(needle_scan, agrees_with_memmem_on_random_text)
{
    unsigned seed = 12345;
    for (int round = 0; round < 400; round++) {
        size_t k = 1 + (size_t)rand_r(&seed) % 150;
        char *needles[150];
        for (size_t i = 0; i < k; i++)
            needles[i] = random_word(&seed, 1, 9);
        size_t n = (size_t)rand_r(&seed) % 600;
        char *hay = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
            hay[i] = "abc<=\""[rand_r(&seed) % 6];
        /* Plant some needles whole, one of them flush with the end. */
        for (int p = 0; p < 3 && n > 0; p++) {
            const char *w = needles[(size_t)rand_r(&seed) % k];
            size_t len = strlen(w);
            if (len <= n) {
                size_t at = p == 0 ? n - len : (size_t)rand_r(&seed) % (n - len + 1);
                memcpy(hay + at, w, len);
            }
        }
        expect_memmem(hay, n, (const char *const *)needles, k);
        free(hay);
        for (size_t i = 0; i < k; i++)
            free(needles[i]);
    }
}

/* Long needles only (the scan skips ahead by the shortest one's length), on
 * longer text: every needle planted at every alignment is still found, and
 * near misses (a needle with its last byte changed) are not. */
Test(needle_scan, long_needles_skip_ahead_and_miss_nothing)
{
    unsigned seed = 777;
    for (int round = 0; round < 300; round++) {
        size_t k = 1 + (size_t)rand_r(&seed) % 70;
        char *needles[70];
        for (size_t i = 0; i < k; i++)
            needles[i] = random_word(&seed, 4 + (size_t)round % 8, 24);
        size_t n = (size_t)rand_r(&seed) % 4000;
        char *hay = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
            hay[i] = "abc<=\""[rand_r(&seed) % 6];
        for (int p = 0; p < 6 && n > 0; p++) {
            const char *w = needles[(size_t)rand_r(&seed) % k];
            size_t len = strlen(w);
            if (len <= n) {
                size_t at = p == 0 ? n - len : p == 1 ? 0 : (size_t)rand_r(&seed) % (n - len + 1);
                memcpy(hay + at, w, len);
                if (p == 5)
                    hay[at + len - 1] = 'z'; /* not in the alphabet: a near miss */
            }
        }
        expect_memmem(hay, n, (const char *const *)needles, k);
        free(hay);
        for (size_t i = 0; i < k; i++)
            free(needles[i]);
    }
}

Test(needle_scan, edges)
{
    static const char *const needles[] = { "abc", "abcd", "bcd", "cd", "", "xyzzy", "abcdefgh" };
    const size_t k = sizeof needles / sizeof needles[0];
    expect_memmem("", 0, needles, k);
    expect_memmem("ab", 2, needles, k);
    expect_memmem("abc", 3, needles, k);
    expect_memmem("xabcd", 5, needles, k);
    expect_memmem("abcdefg", 7, needles, k);   /* the long needle one byte short */
    expect_memmem("abcdefgh", 8, needles, k);  /* ...and flush with the end */
    /* Bytes past n are not part of the text. */
    const char *buf = "xyzzy";
    expect_memmem(buf, 4, needles, k);
}

Test(needle_scan, found_stays_set_and_high_bytes_match)
{
    static const char *const needles[] = { "\xc3\xa9t\xc3\xa9", "plain" };
    bool found[2] = { false, true };
    vf_needle_scan("un \xc3\xa9t\xc3\xa9 chaud", 13, needles, 2, found);
    cr_assert(found[0]);
    cr_assert(found[1], "a needle already found is not cleared");
}

/* The folding reference: both lowered (ASCII letters only), then memmem. */
static size_t lowered_find(const char *hay, size_t n, const char *needle)
{
    size_t len = strlen(needle);
    char *h = malloc(n + 1), *w = malloc(len + 1);
    for (size_t i = 0; i < n; i++)
        h[i] = (char)(hay[i] >= 'A' && hay[i] <= 'Z' ? hay[i] + 32 : hay[i]);
    for (size_t i = 0; i < len; i++)
        w[i] = (char)(needle[i] >= 'A' && needle[i] <= 'Z' ? needle[i] + 32 : needle[i]);
    const char *at = memmem(h, n, w, len);
    size_t where = at ? (size_t)(at - h) : n;
    free(h);
    free(w);
    return where;
}

static char *mixed_word(unsigned *seed, size_t min, size_t max)
{
    size_t len = min + (size_t)rand_r(seed) % (max - min + 1);
    char *w = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        w[i] = "aAbB@`<\xc1\xe1"[rand_r(seed) % 9];
    w[len] = '\0';
    return w;
}

/* Folded: found and the leftmost start agree with lowering both sides first,
 * on text where letters come in both cases and '@', '`', 0xC1 and 0xE1 sit
 * one bit away from them; needles planted in a random case. */
Test(needle_scan, nocase_agrees_with_lowering_first)
{
    unsigned seed = 4242;
    for (int round = 0; round < 400; round++) {
        size_t k = 1 + (size_t)rand_r(&seed) % 80;
        char *needles[80];
        for (size_t i = 0; i < k; i++)
            needles[i] = mixed_word(&seed, 1 + (size_t)round % 3, 10);
        size_t n = (size_t)rand_r(&seed) % 1500;
        char *hay = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
            hay[i] = "aAbB@`<\xc1\xe1"[rand_r(&seed) % 9];
        for (int p = 0; p < 4 && n > 0; p++) {
            const char *w = needles[(size_t)rand_r(&seed) % k];
            size_t len = strlen(w);
            if (len <= n) {
                size_t at = p == 0 ? n - len : (size_t)rand_r(&seed) % (n - len + 1);
                for (size_t i = 0; i < len; i++) {
                    char c = w[i];
                    if (((c | 32) == 'a' || (c | 32) == 'b') && rand_r(&seed) % 2)
                        c ^= 32; /* the other case */
                    hay[at + i] = c;
                }
            }
        }
        bool found[80] = { false };
        vf_needle_scan_nocase(hay, n, (const char *const *)needles, k, found);
        for (size_t i = 0; i < k; i++) {
            size_t want = lowered_find(hay, n, needles[i]);
            bool want_found = want < n || needles[i][0] == '\0';
            cr_assert_eq(found[i], want_found, "needle '%s' in %zu bytes", needles[i], n);
            cr_assert_eq(vf_needle_find_nocase(hay, n, needles[i]), want, "needle '%s' in %zu bytes", needles[i], n);
        }
        free(hay);
        for (size_t i = 0; i < k; i++)
            free(needles[i]);
    }
}

Test(needle_scan, byte_for_byte_scan_does_not_fold)
{
    static const char *const needles[] = { "didomi", "px" };
    bool found[2] = { false };
    vf_needle_scan("DiDoMi PX", 9, needles, 2, found);
    cr_assert(!found[0] && !found[1]);
    vf_needle_scan_nocase("DiDoMi PX", 9, needles, 2, found);
    cr_assert(found[0] && found[1]);
    cr_assert_eq(vf_needle_find_nocase("xx DIDOMI didomi", 16, "didomi"), 3, "the leftmost start");
    cr_assert_eq(vf_needle_find_nocase("xx didom", 8, "didomi"), 8, "none: n");
}
