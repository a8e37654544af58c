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

/* A small alphabet, so prefixes collide often; the folding tests add both
 * cases and bytes one bit away from letters. */
#define PLAIN_ALPHABET "abc<=\""
#define MIXED_ALPHABET "aAbB@`<\xc1\xe1"

/* len bytes drawn from alphabet, NUL-terminated. */
static char *random_text(unsigned *seed, size_t len, const char *alphabet)
{
    size_t k = strlen(alphabet);
    char *w = malloc(len + 1);
    cr_assert_not_null(w);
    for (size_t i = 0; i < len; i++)
        w[i] = alphabet[(size_t)rand_r(seed) % k];
    w[len] = '\0';
    return w;
}

static char *random_word(unsigned *seed, size_t min, size_t max, const char *alphabet)
{
    return random_text(seed, min + (size_t)rand_r(seed) % (max - min + 1), alphabet);
}

enum { AT_END, AT_START, AT_RANDOM };

/* Copies w into hay[0..n) flush with its end, at its start or at a random
 * place, its letters a and b in a random case when any_case. Returns where
 * it went, or n when it does not fit. */
static size_t plant(unsigned *seed, char *hay, size_t n, const char *w, int where, bool any_case)
{
    size_t len = strlen(w);
    if (len > n)
        return n;
    size_t at = where == AT_END ? n - len : where == AT_START ? 0 : (size_t)rand_r(seed) % (n - len + 1);
    for (size_t i = 0; i < len; i++) {
        char c = w[i];
        if (any_case && ((c | 32) == 'a' || (c | 32) == 'b') && rand_r(seed) % 2)
            c ^= 32; /* the other case */
        hay[at + i] = c;
    }
    return at;
}

static const char *pick(unsigned *seed, char *const *words, size_t k)
{
    return words[(size_t)rand_r(seed) % k];
}

/* One round of a test: up to max_k needles of min_len..max_len bytes and
 * up to max_n bytes of text, all from alphabet. */
typedef struct {
    char *needles[150];
    size_t k;
    char *hay;
    size_t n;
} trial;

static void trial_make(trial *t, unsigned *seed, size_t max_k, size_t min_len, size_t max_len, size_t max_n,
                       const char *alphabet)
{
    cr_assert_leq(max_k, sizeof t->needles / sizeof t->needles[0]);
    t->k = 1 + (size_t)rand_r(seed) % max_k;
    for (size_t i = 0; i < t->k; i++)
        t->needles[i] = random_word(seed, min_len, max_len, alphabet);
    t->n = (size_t)rand_r(seed) % max_n;
    t->hay = random_text(seed, t->n, alphabet);
}

static void trial_free(trial *t)
{
    for (size_t i = 0; i < t->k; i++)
        free(t->needles[i]);
    free(t->hay);
}

Test(needle_scan, agrees_with_memmem_on_random_text)
{
    unsigned seed = 12345;
    for (int round = 0; round < 400; round++) {
        trial t;
        trial_make(&t, &seed, 150, 1, 9, 600, PLAIN_ALPHABET);
        /* Plant some needles whole, one of them flush with the end. */
        for (int p = 0; p < 3; p++)
            plant(&seed, t.hay, t.n, pick(&seed, t.needles, t.k), p == 0 ? AT_END : AT_RANDOM, false);
        expect_memmem(t.hay, t.n, (const char *const *)t.needles, t.k);
        trial_free(&t);
    }
}

/* Long needles only (the scan skips ahead by the shortest one's length), on
 * longer text: every needle planted at every alignment is still found, and
 * near misses (a needle with its last byte changed) are not. */
Test(needle_scan, long_needles_skip_ahead_and_miss_nothing)
{
    unsigned seed = 777;
    for (int round = 0; round < 300; round++) {
        trial t;
        trial_make(&t, &seed, 70, 4 + (size_t)round % 8, 24, 4000, PLAIN_ALPHABET);
        for (int p = 0; p < 6; p++) {
            const char *w = pick(&seed, t.needles, t.k);
            size_t at = plant(&seed, t.hay, t.n, w, p == 0 ? AT_END : p == 1 ? AT_START : AT_RANDOM, false);
            if (p == 5 && at < t.n)
                t.hay[at + strlen(w) - 1] = 'z'; /* not in the alphabet: a near miss */
        }
        expect_memmem(t.hay, t.n, (const char *const *)t.needles, t.k);
        trial_free(&t);
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

/* Folded: found and the leftmost start agree with lowering both sides first,
 * on text where letters come in both cases and '@', '`', 0xC1 and 0xE1 sit
 * one bit away from them; needles planted in a random case. */
Test(needle_scan, nocase_agrees_with_lowering_first)
{
    unsigned seed = 4242;
    for (int round = 0; round < 400; round++) {
        trial t;
        trial_make(&t, &seed, 80, 1 + (size_t)round % 3, 10, 1500, MIXED_ALPHABET);
        for (int p = 0; p < 4; p++)
            plant(&seed, t.hay, t.n, pick(&seed, t.needles, t.k), p == 0 ? AT_END : AT_RANDOM, true);
        bool found[80] = { false };
        vf_needle_scan_nocase(t.hay, t.n, (const char *const *)t.needles, t.k, found);
        for (size_t i = 0; i < t.k; i++) {
            const char *w = t.needles[i];
            size_t want = lowered_find(t.hay, t.n, w);
            cr_assert_eq(found[i], want < t.n || w[0] == '\0', "needle '%s' in %zu bytes", w, t.n);
            cr_assert_eq(vf_needle_find_nocase(t.hay, t.n, w), want, "needle '%s' in %zu bytes", w, t.n);
        }
        trial_free(&t);
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
