/* One pass, up to 64 needles at a time: a position is a candidate for the
 * needles whose first three bytes are the three bytes there, found by ANDing
 * three 64-bit masks indexed by those bytes; only candidates are compared in
 * full. On markup most positions have no candidate at all. */
#include "worker/content/needle_scan.h"

#include <stdint.h>
#include <string.h>

#define GROUP 64

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
    if (!pending || n < 3)
        return;
    /* Each byte is read once: it completes the candidates of the position
     * two back, extends those of the one before, and starts its own. A found
     * needle leaves at0, so it is never a candidate again. */
    uint64_t one = at0[hay[0]], two = one & at1[hay[1]];
    one = at0[hay[1]];
    const unsigned char *q = hay + 2, *end = hay + n;
    while (q < end) {
        uint64_t cand = 0;
        /* Two bytes a round while both are there: most rounds find nothing. */
        while (q + 1 < end) {
            unsigned char c = q[0], d = q[1];
            uint64_t at_c = two & at2[c];
            uint64_t two_c = one & at1[c];
            uint64_t at_d = two_c & at2[d];
            if (at_c | at_d) {
                if (at_c) {
                    cand = at_c; /* d is looked at again next round */
                    two = two_c;
                    one = at0[c];
                    q += 1;
                } else {
                    cand = at_d;
                    two = at0[c] & at1[d];
                    one = at0[d];
                    q += 2;
                }
                break;
            }
            two = at0[c] & at1[d];
            one = at0[d];
            q += 2;
        }
        if (!cand) {
            if (q >= end)
                return;
            unsigned char c = *q++; /* the last byte */
            cand = two & at2[c];
            two = one & at1[c];
            one = at0[c];
            if (!cand)
                return;
        }
        size_t p = (size_t)(q - hay) - 3; /* where the candidates start */
        while (cand) {
            unsigned i = (unsigned)__builtin_ctzll(cand);
            cand &= cand - 1;
            if (!(pending & (1ull << i)))
                continue;
            if (len[i] <= n - p && memcmp(hay + p + 3, needles[i] + 3, len[i] - 3) == 0) {
                found[i] = true;
                pending &= ~(1ull << i);
                const unsigned char *s = (const unsigned char *)needles[i];
                at0[s[0]] &= ~(1ull << i);
                one &= ~(1ull << i);
                two &= ~(1ull << i);
                if (!pending)
                    return;
            }
        }
    }
}

void vf_needle_scan(const char *hay, size_t n, const char *const *needles, size_t k, bool *found)
{
    for (size_t at = 0; at < k; at += GROUP)
        scan_group((const unsigned char *)hay, n, needles + at, k - at < GROUP ? k - at : GROUP, found + at);
}
