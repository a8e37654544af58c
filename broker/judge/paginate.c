#include "broker/judge/paginate.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "broker/judge/utf8_text.h"

static bool is_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* Non-continuation bytes among the eight at p (the code points they start). */
static size_t leads_in_word(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t cont = vf_utf8_cont_lanes(w);
    return 8 - (size_t)((cont * UINT64_C(0x0101010101010101)) >> 56);
}

/* Byte offset of code point index idx counted from `from` (len when past
 * the end); *chars gets the code points actually passed. The first step
 * passes s[from] and every step ends on the next non-continuation byte, so
 * the answer is the idx-th such byte after `from`: whole words are skipped
 * while they hold fewer than are still needed (a 1 MiB page is one pass). */
static size_t byte_at(const char *s, size_t len, size_t from, size_t idx, size_t *chars)
{
    if (from >= len || idx == 0) {
        *chars = 0;
        return from;
    }
    const unsigned char *p = (const unsigned char *)s;
    size_t want = idx, i = from + 1;
    while (len - i >= 8) {
        size_t leads = leads_in_word(p + i);
        if (leads >= want)
            break;
        want -= leads;
        i += 8;
    }
    for (; i < len; i++)
        if (!is_cont(p[i]) && --want == 0) {
            *chars = idx;
            return i;
        }
    *chars = idx - want + 1;
    return len;
}

static size_t count_cp(const char *s, size_t from, size_t to)
{
    return vf_utf8_count(s + from, to - from);
}

/* Latest boundary in (floor, end]: the byte offset just after it, or 0. */
static size_t boundary(const char *s, size_t floor, size_t end)
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

void vf_paginate(const char *text, size_t len, size_t start_index, size_t max_chars,
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
    /* The rest fits (the usual case): no second walk over it. begin starts
     * code point start_index, so the rest holds total - start_index (text
     * that opens with a stray continuation byte, never sanitised text,
     * counts differently and takes the walk). */
    if (!is_cont((unsigned char)text[0]) && cut->total_chars - start_index <= max_chars) {
        cut->end = len;
        cut->slice_chars = cut->total_chars - start_index;
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
    size_t b = boundary(text, floor, end);
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

void vf_paginate_hint(const vf_page_cut *cut, char *buf, size_t len)
{
    snprintf(buf, len,
             "[Page text continues: %zu of %zu characters shown from %zu. "
             "Ask again with start_index %zu for the rest.]",
             cut->slice_chars, cut->total_chars, cut->start_index, cut->next_start_index);
}
