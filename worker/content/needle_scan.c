/* One pass, up to 64 needles at a time, skipping ahead Wu-Manber style on
 * pairs of bytes: a position is a candidate for the needles whose first
 * three bytes are the three bytes there, found by ANDing three 64-bit masks
 * indexed by those bytes; only candidates are compared in full. On markup
 * most windows are skipped and most checked positions have no candidate.
 * Case folding costs the hot loop nothing: the tables are filled for both
 * cases of a needle's letters, so only a candidate's full compare folds. */
#include "worker/content/needle_scan.h"

#include <stdint.h>
#include <string.h>

#define GROUP 64
#define SHIFT_SLOTS 4096u

static size_t pair_slot(unsigned char a, unsigned char b)
{
    return (((size_t)a << 5) ^ b) & (SHIFT_SLOTS - 1);
}

static unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* The bytes a needle byte c stands for: itself, and with fold, its other
 * case (only ASCII letters have one). Returns how many (1 or 2). */
static unsigned spellings(unsigned char c, bool fold, unsigned char out[2])
{
    out[0] = fold ? lower(c) : c;
    if (fold && out[0] >= 'a' && out[0] <= 'z') {
        out[1] = (unsigned char)(out[0] - 32);
        return 2;
    }
    return 1;
}

static bool same(const unsigned char *hay, const unsigned char *needle, size_t len, bool fold)
{
    if (!fold)
        return memcmp(hay, needle, len) == 0;
    for (size_t i = 0; i < len; i++)
        if (lower(hay[i]) != lower(needle[i]))
            return false;
    return true;
}

/* The first start of needle in hay, or n: for needles too short to scan. */
static size_t find_short(const unsigned char *hay, size_t n, const unsigned char *needle, size_t len, bool fold)
{
    if (!fold) {
        const unsigned char *at = memmem(hay, n, needle, len);
        return at ? (size_t)(at - hay) : n;
    }
    for (size_t p = 0; len <= n && p <= n - len; p++)
        if (same(hay + p, needle, len, fold))
            return p;
    return n;
}

/* The masks of a needle's first three bytes and the shifts of its pairs,
 * every spelling of each. */
static void mark_needle(const unsigned char *s, size_t i, size_t m, bool fold, uint64_t *at[3], uint8_t *shift)
{
    unsigned char sp[2], sq[2];
    for (size_t j = 0; j < 3; j++)
        for (unsigned a = 0, na = spellings(s[j], fold, sp); a < na; a++)
            at[j][sp[a]] |= 1ull << i;
    for (size_t q = 1; q < m; q++) {
        unsigned na = spellings(s[q - 1], fold, sp), nb = spellings(s[q], fold, sq);
        for (unsigned a = 0; a < na; a++)
            for (unsigned b = 0; b < nb; b++) {
                uint8_t *sh = &shift[pair_slot(sp[a], sq[b])];
                if (m - 1 - q < *sh)
                    *sh = (uint8_t)(m - 1 - q);
            }
    }
}

/* Sets found[i] for the needles of this group that occur; with first, also
 * first[i] = where the leftmost occurrence starts (positions are tried left
 * to right, so the first hit is the leftmost). */
static void scan_group(const unsigned char *hay, size_t n, const char *const *needles, size_t k, bool fold,
                       bool *found, size_t *first)
{
    uint64_t at0[256] = { 0 }, at1[256] = { 0 }, at2[256] = { 0 };
    size_t len[GROUP];
    uint64_t pending = 0;
    for (size_t i = 0; i < k; i++) {
        len[i] = strlen(needles[i]);
        if (found[i])
            continue;
        if (len[i] < 3) {
            size_t at = find_short(hay, n, (const unsigned char *)needles[i], len[i], fold);
            found[i] = at < n || len[i] == 0;
            if (first && found[i])
                first[i] = at < n ? at : 0;
            continue;
        }
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
    uint64_t *at[3] = { at0, at1, at2 };
    for (size_t i = 0; i < k; i++)
        if (pending & (1ull << i))
            mark_needle((const unsigned char *)needles[i], i, m, fold, at, shift);
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
            if (len[i] <= n - p && same(hay + p + 3, (const unsigned char *)needles[i] + 3, len[i] - 3, fold)) {
                found[i] = true;
                if (first)
                    first[i] = p;
                pending &= ~(1ull << i);
                if (!pending)
                    return;
            }
        }
        pos++;
    }
}

static void scan_all(const char *hay, size_t n, const char *const *needles, size_t k, bool fold, bool *found)
{
    for (size_t at = 0; at < k; at += GROUP)
        scan_group((const unsigned char *)hay, n, needles + at, k - at < GROUP ? k - at : GROUP, fold, found + at,
                   NULL);
}

void vf_needle_scan(const char *hay, size_t n, const char *const *needles, size_t k, bool *found)
{
    scan_all(hay, n, needles, k, false, found);
}

void vf_needle_scan_nocase(const char *hay, size_t n, const char *const *needles, size_t k, bool *found)
{
    scan_all(hay, n, needles, k, true, found);
}

size_t vf_needle_find_nocase(const char *hay, size_t n, const char *needle)
{
    bool found = false;
    size_t first = n;
    scan_group((const unsigned char *)hay, n, &needle, 1, true, &found, &first);
    return found ? first : n;
}
