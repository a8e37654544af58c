/* vf_paginate skips whole words when it counts code points; these tests hold
 * it to the byte-at-a-time cut it replaced (reference_paginate below, as it
 * was in broker/judge/paginate.c) on random mixtures of ASCII, separators,
 * multibyte characters and stray bytes, field by field. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/paginate.h"

static bool is_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* Byte offset of code point index idx (len when past the end); *chars gets
 * the code points actually passed. */
static size_t byte_at(const char *s, size_t len, size_t from, size_t idx, size_t *chars)
{
    size_t k = 0, i = from;
    while (i < len && k < idx) {
        i++;
        while (i < len && is_cont((unsigned char)s[i]))
            i++;
        k++;
    }
    *chars = k;
    return i;
}

static size_t count_cp(const char *s, size_t from, size_t to)
{
    size_t k = 0;
    for (size_t i = from; i < to; i++)
        k += !is_cont((unsigned char)s[i]);
    return k;
}

/* Latest boundary in (floor, end]: the byte offset just after it, or 0. */
static size_t ref_boundary(const char *s, size_t floor, size_t end)
{
    /* Paragraph, then line, then sentence, then word. */
    for (size_t i = end; i > floor + 1; i--)
        if (s[i - 1] == '\n' && s[i - 2] == '\n')
            return i;
    for (size_t i = end; i > floor; i--)
        if (s[i - 1] == '\n')
            return i;
    for (size_t i = end; i > floor + 1; i--) {
        char p = s[i - 2], c = s[i - 1];
        if ((p == '.' || p == '!' || p == '?') && c == ' ')
            return i;
        /* 。！？ end a sentence without a space */
        if (i >= floor + 3 && (unsigned char)s[i - 3] == 0xE3 && (unsigned char)s[i - 2] == 0x80 &&
            (unsigned char)s[i - 1] == 0x82)
            return i;
        if (i >= floor + 3 && (unsigned char)s[i - 3] == 0xEF && (unsigned char)s[i - 2] == 0xBC &&
            ((unsigned char)s[i - 1] == 0x81 || (unsigned char)s[i - 1] == 0x9F))
            return i;
    }
    for (size_t i = end; i > floor; i--)
        if (s[i - 1] == ' ')
            return i;
    return 0;
}

static void reference_paginate(const char *text, size_t len, size_t start_index, size_t max_chars,
                 vf_page_cut *cut)
{
    memset(cut, 0, sizeof *cut);
    cut->start_index = start_index;
    cut->total_chars = count_cp(text, 0, len);
    size_t passed;
    cut->begin = byte_at(text, len, 0, start_index, &passed);
    if (passed < start_index || cut->begin >= len) {
        cut->begin = cut->end = len;
        return;
    }
    size_t got;
    size_t end = byte_at(text, len, cut->begin, max_chars, &got);
    if (end >= len) {
        cut->end = len;
        cut->slice_chars = got;
        return;
    }
    size_t half_chars;
    size_t floor = byte_at(text, len, cut->begin, max_chars / 2, &half_chars);
    size_t b = ref_boundary(text, floor, end);
    if (b > cut->begin)
        end = b;
    cut->end = end;
    cut->slice_chars = count_cp(text, cut->begin, end);
    /* The next page starts at its first non-blank character. */
    size_t next = end, skipped = 0;
    while (next < len && (text[next] == ' ' || text[next] == '\n')) {
        next++;
        skipped++;
    }
    cut->truncated = next < len;
    cut->next_start_index = start_index + cut->slice_chars + skipped;
    /* The slice itself does not end in the separator it was cut at. */
    while (cut->end > cut->begin && (text[cut->end - 1] == ' ' || text[cut->end - 1] == '\n')) {
        cut->end--;
        cut->slice_chars--;
    }
}


static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static unsigned next_rand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state >> 11);
}

/* Pieces that move the cut: blanks, breaks, sentence ends (ASCII and CJK),
 * two- to four-byte characters and bytes that start or continue nothing. */
static const char *const pieces[] = {
    "a", "word", "x", " ", "\n", "\n\n", ". ", "! ", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80",
    "\xe3\x80\x82", "\xef\xbc\x81", "\xef\xbc\x9f", "\x80", "\xc3", "\xbf\xbf",
};

static size_t mixture(char *buf, size_t cap)
{
    size_t len = 0, target = next_rand() % cap;
    bool plain = next_rand() % 2; /* long ASCII runs, as most pages are */
    while (len < target) {
        const char *p = plain && next_rand() % 4 ? "a" : pieces[next_rand() % (sizeof pieces / sizeof pieces[0])];
        size_t n = strlen(p);
        if (len + n > cap)
            break;
        memcpy(buf + len, p, n);
        len += n;
    }
    return len;
}

static void same_cut(const char *t, size_t len, size_t start, size_t max)
{
    vf_page_cut got, want;
    vf_paginate(t, len, start, max, &got);
    reference_paginate(t, len, start, max, &want);
    cr_assert_eq(got.total_chars, want.total_chars, "len %zu start %zu max %zu", len, start, max);
    cr_assert_eq(got.begin, want.begin, "len %zu start %zu max %zu", len, start, max);
    cr_assert_eq(got.end, want.end, "len %zu start %zu max %zu", len, start, max);
    cr_assert_eq(got.slice_chars, want.slice_chars, "len %zu start %zu max %zu", len, start, max);
    cr_assert_eq(got.truncated, want.truncated, "len %zu start %zu max %zu", len, start, max);
    cr_assert_eq(got.next_start_index, want.next_start_index, "len %zu start %zu max %zu", len, start, max);
    cr_assert_eq(got.start_index, want.start_index);
}

Test(paginate_fast, every_cut_matches_the_byte_at_a_time_cut)
{
    enum { CAP = 700 };
    char buf[CAP];
    for (int k = 0; k < 40000; k++) {
        size_t len = mixture(buf, CAP);
        size_t start = next_rand() % 4 ? next_rand() % (len + 3) : 0;
        size_t max = 1 + next_rand() % (len + 3);
        /* an allocation of exactly len bytes: a read past it trips ASan */
        char *exact = malloc(len ? len : 1);
        cr_assert_not_null(exact);
        memcpy(exact, buf, len);
        same_cut(exact, len, start, max);
        free(exact);
    }
}

Test(paginate_fast, a_large_page_cuts_as_before)
{
    size_t cap = 1u << 20;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    for (int k = 0; k < 6; k++) {
        size_t len = 0;
        while (len + 800 < cap)
            len += mixture(t + len, 800);
        size_t starts[] = { 0, 1, 7, next_rand() % len, len / 2 };
        size_t maxes[] = { 1, 9, 20000, 1000000, next_rand() % len + 1 };
        for (size_t i = 0; i < 5; i++)
            for (size_t j = 0; j < 5; j++)
                same_cut(t, len, starts[i], maxes[j]);
    }
    free(t);
}
