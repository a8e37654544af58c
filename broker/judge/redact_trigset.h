/* The trigger set of text redaction (private). Secrets and pattern rules each
 * build one; the scan (redact_scan.h) walks the text with their union.
 *
 * A trigger set holds every 3-byte prefix that can begin something to
 * redact (a secret in any encoding, or a pattern rule). It is a two-hash
 * Bloom filter: two 64 Ki-bit tables indexed by independent multiplicative
 * hashes of the three bytes. The hot loop tests only the first table (one
 * 4-byte load, a multiply and a bit test per position); the ~1% of
 * positions that pass are confirmed against the second, which leaves
 * almost only real candidates for the exact checks. Positions less than
 * three bytes from the end are tested with zero padding (only tiny secrets
 * can match there, and their prefixes are registered with every
 * completion).
 *
 * In front of the filter sits an exact table of the first two bytes of
 * every trigger, a byte per pair: a 2-byte load and a byte load per
 * position, no multiply, and prose rarely holds a trigger's first two
 * bytes (the table is 64 KiB, but a page touches few of its lines). */
#ifndef VERIFETCH_REDACT_TRIGSET_H
#define VERIFETCH_REDACT_TRIGSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint8_t pairs[65536];       /* indexed by vf_trig_pair: 1 for the first two bytes of a trigger */
    uint64_t bits[65536 / 64];  /* indexed by vf_trig_hash */
    uint64_t bits2[65536 / 64]; /* indexed by vf_trig_hash2 */
} vf_trigset;

/* The three bytes at p as one integer (p must have 4 readable bytes). */
static inline uint32_t vf_trig_word(const unsigned char *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return w >> 8;
#else
    return w & 0xFFFFFFu;
#endif
}

/* The two bytes at p as one index. */
static inline unsigned vf_trig_pair(const unsigned char *p)
{
    uint16_t w;
    memcpy(&w, p, 2);
    return w;
}

static inline unsigned vf_trig_hash(const unsigned char *p)
{
    return (unsigned)((vf_trig_word(p) * UINT32_C(0x9E3779B1)) >> 16);
}

static inline unsigned vf_trig_hash2(const unsigned char *p)
{
    return (unsigned)((vf_trig_word(p) * UINT32_C(0x85EBCA77)) >> 16);
}

static inline void vf_trigset_add(vf_trigset *s, unsigned char a, unsigned char b, unsigned char c)
{
    unsigned char p[4] = {a, b, c, 0};
    unsigned h = vf_trig_hash(p), h2 = vf_trig_hash2(p), pr = vf_trig_pair(p);
    s->pairs[pr] = 1;
    s->bits[h >> 6] |= UINT64_C(1) << (h & 63);
    s->bits2[h2 >> 6] |= UINT64_C(1) << (h2 & 63);
}

/* Every triple starting "ab" (for forms shorter than three bytes). */
static inline void vf_trigset_add_pair(vf_trigset *s, unsigned char a, unsigned char b)
{
    for (unsigned c = 0; c < 256; c++)
        vf_trigset_add(s, a, b, (unsigned char)c);
}

static inline void vf_trigset_add_all(vf_trigset *s)
{
    memset(s->pairs, 1, sizeof s->pairs);
    memset(s->bits, 0xFF, sizeof s->bits);
    memset(s->bits2, 0xFF, sizeof s->bits2);
}

static inline void vf_trigset_union(vf_trigset *dst, const vf_trigset *src)
{
    for (size_t k = 0; k < sizeof dst->pairs; k++)
        dst->pairs[k] |= src->pairs[k];
    for (size_t k = 0; k < sizeof dst->bits / sizeof dst->bits[0]; k++) {
        dst->bits[k] |= src->bits[k];
        dst->bits2[k] |= src->bits2[k];
    }
}

/* Pair test: 0 or 1, an integer so four combine with one branch. */
static inline unsigned vf_trigset_pair_test(const vf_trigset *s, const unsigned char *p)
{
    return s->pairs[vf_trig_pair(p)];
}

/* First-table test: 0 or 1, an integer so four combine with one branch. */
static inline unsigned vf_trigset_test(const vf_trigset *s, unsigned h)
{
    return (unsigned)(s->bits[h >> 6] >> (h & 63)) & 1u;
}

/* Both tables, for position i of t[0..len). */
static inline bool vf_trigset_has(const vf_trigset *s, const unsigned char *t, size_t i, size_t len)
{
    unsigned char pad[4] = {0, 0, 0, 0};
    const unsigned char *p = t + i;
    if (len - i < 4) {
        memcpy(pad, p, len - i);
        p = pad;
    }
    unsigned h2 = vf_trig_hash2(p);
    return vf_trigset_test(s, vf_trig_hash(p)) && ((s->bits2[h2 >> 6] >> (h2 & 63)) & 1);
}

/* First position in [i, end) that may start a trigger, or end (end <= len). */
static inline size_t vf_trigset_next(const vf_trigset *s, const unsigned char *t, size_t i,
                                     size_t end, size_t len)
{
    /* Four positions per step, one branch (pairs end at i + 4; the bound
     * leaves the full test its 4-byte loads, which end at i + 6).
     * A step that passes the first table is confirmed position by position,
     * then the fast steps resume (a false positive must not leave the rest
     * of the text to the slow loop). */
    while (i + 7 <= len && i + 4 <= end) {
        if (vf_trigset_pair_test(s, t + i) | vf_trigset_pair_test(s, t + i + 1) |
            vf_trigset_pair_test(s, t + i + 2) | vf_trigset_pair_test(s, t + i + 3)) {
            for (size_t k = i; k < i + 4; k++)
                if (vf_trigset_has(s, t, k, len))
                    return k;
        }
        i += 4;
    }
    for (; i < end; i++)
        if (vf_trigset_has(s, t, i, len))
            return i;
    return end;
}

#endif
