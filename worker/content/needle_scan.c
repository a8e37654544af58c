/* One pass, up to 64 needles at a time, skipping ahead Wu-Manber style on
 * pairs of bytes: a position is a candidate for the needles whose first
 * three bytes are the three bytes there, found by ANDing three 64-bit masks
 * indexed by those bytes; only candidates are compared in full. On markup
 * most windows are skipped and most checked positions have no candidate. */
#include "worker/content/needle_scan.h"

#include <stdint.h>
#include <string.h>

#define GROUP 64
#define SHIFT_SLOTS 4096u

static size_t pair_slot(unsigned char a, unsigned char b)
{
    return (((size_t)a << 5) ^ b) & (SHIFT_SLOTS - 1);
}

static void scan_group(const unsigned char *hay, size_t n, const char *const *needles, size_t k, bool *found)
{
    uint64_t at0[256] = { 0 }, at1[256] = { 0 }, at2[256] = { 0 };
    size_t len[GROUP];
    uint64_t pending = 0;
    for (size_t i = 0; i < k; i++) {
        len[i] = strlen(needles[i]);
        if (found[i])
            continue;
        if (len[i] < 3) {
            found[i] = len[i] == 0 || memmem(hay, n, needles[i], len[i]) != NULL;
            continue;
        }
        const unsigned char *s = (const unsigned char *)needles[i];
        at0[s[0]] |= 1ull << i;
        at1[s[1]] |= 1ull << i;
        at2[s[2]] |= 1ull << i;
        pending |= 1ull << i;
    }
    if (!pending)
        return;
    /* Wu-Manber: every pending needle is at least m bytes long, so a needle
     * starting at p has its two bytes m-2, m-1 at the end of the window
     * hay[p .. p+m-1]. shift[] says, for the last two bytes of a window
     * (hashed), how far the window may move before such a pair could end it:
     * most windows of markup move m-1 bytes at once, and only windows a
     * needle could start are checked (three-byte filter, then in full). */
    size_t m = SIZE_MAX;
    for (size_t i = 0; i < k; i++)
        if ((pending & (1ull << i)) && len[i] < m)
            m = len[i];
    if (n < m)
        return;
    uint8_t shift[SHIFT_SLOTS];
    memset(shift, m - 1 < 255 ? (int)(m - 1) : 255, sizeof shift);
    for (size_t i = 0; i < k; i++) {
        if (!(pending & (1ull << i)))
            continue;
        const unsigned char *s = (const unsigned char *)needles[i];
        for (size_t q = 1; q < m; q++) {
            uint8_t *sh = &shift[pair_slot(s[q - 1], s[q])];
            if (m - 1 - q < *sh)
                *sh = (uint8_t)(m - 1 - q);
        }
    }
    for (size_t pos = m - 1; pos < n;) {
        uint8_t sh = shift[pair_slot(hay[pos - 1], hay[pos])];
        if (sh) {
            pos += sh;
            continue;
        }
        size_t p = pos - (m - 1);
        uint64_t cand = at0[hay[p]] & at1[hay[p + 1]] & at2[hay[p + 2]] & pending;
        while (cand) {
            unsigned i = (unsigned)__builtin_ctzll(cand);
            cand &= cand - 1;
            if (len[i] <= n - p && memcmp(hay + p + 3, needles[i] + 3, len[i] - 3) == 0) {
                found[i] = true;
                pending &= ~(1ull << i);
                if (!pending)
                    return;
            }
        }
        pos++;
    }
}

void vf_needle_scan(const char *hay, size_t n, const char *const *needles, size_t k, bool *found)
{
    for (size_t at = 0; at < k; at += GROUP)
        scan_group((const unsigned char *)hay, n, needles + at, k - at < GROUP ? k - at : GROUP, found + at);
}
