#include "broker/judge/paginate.h"

#include <stdio.h>
#include <string.h>

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
