/* Sixteen bytes at a time for the passes over a page's text (escaping,
 * UTF-8 checks and counts, the model-text check). SSE2 is part of x86-64,
 * so it is always there on the machines verifetch ships for; elsewhere
 * VF_TEXT_SIMD is 0 and callers keep their 8-byte word loops. Each helper
 * returns a bit per byte (bit k for p[k]) or a count, never a guess. */
#ifndef VERIFETCH_TEXT_SIMD_H
#define VERIFETCH_TEXT_SIMD_H

#if defined(__SSE2__)
#define VF_TEXT_SIMD 1
#include <emmintrin.h>
#include <stddef.h>
#include <stdint.h>

static inline __m128i vf_simd_load(const unsigned char *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* Bytes of x a JSON string must escape: below 0x20, '"' and '\\'. */
static inline unsigned vf_simd_escape_mask_of(__m128i x)
{
    __m128i ctl = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
    __m128i q = _mm_cmpeq_epi8(x, _mm_set1_epi8('"'));
    __m128i bs = _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'));
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(ctl, _mm_or_si128(q, bs)));
}

static inline unsigned vf_simd_escape_mask(const unsigned char *p)
{
    return vf_simd_escape_mask_of(vf_simd_load(p));
}

/* Copies the sixteen bytes at p to dst (which has room for them) and
 * returns how many lead the first byte to escape: 16 when none does. One
 * pass reads, checks and writes a run, with no copy call per run. */
static inline size_t vf_simd_copy_plain(char *dst, const unsigned char *p)
{
    __m128i x = vf_simd_load(p);
    unsigned m = vf_simd_escape_mask_of(x);
    _mm_storeu_si128((__m128i *)(void *)dst, x);
    return m ? (size_t)__builtin_ctz(m) : 16;
}

/* Bytes that are not ASCII or are NUL: where UTF-8 checking must look. */
static inline unsigned vf_simd_not_ascii_or_nul_mask(const unsigned char *p)
{
    __m128i x = vf_simd_load(p);
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(x, _mm_cmpeq_epi8(x, _mm_setzero_si128())));
}

/* Bytes model text does not keep as they are: outside printable ASCII
 * (0x20..0x7E) other than line feed and tab. The signed compare takes
 * bytes >= 0x80 as negative, so "below 0x20" covers them too. */
static inline unsigned vf_simd_not_plain_text_mask(const unsigned char *p)
{
    __m128i x = vf_simd_load(p);
    __m128i low = _mm_cmplt_epi8(x, _mm_set1_epi8(0x20));
    __m128i kept = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\t')));
    __m128i del = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7F));
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_andnot_si128(kept, low), del));
}

/* Continuation bytes (10xxxxxx) in p[0..16 * blocks). */
static inline size_t vf_simd_count_continuations(const unsigned char *p, size_t blocks)
{
    size_t total = 0;
    while (blocks > 0) {
        /* Byte counters, folded before any can pass 255. */
        size_t n = blocks < 255 ? blocks : 255;
        __m128i acc = _mm_setzero_si128();
        for (size_t k = 0; k < n; k++, p += 16)
            acc = _mm_sub_epi8(acc, _mm_cmplt_epi8(vf_simd_load(p), _mm_set1_epi8((char)0xC0)));
        __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
        total += (size_t)_mm_cvtsi128_si32(sums) + (size_t)_mm_cvtsi128_si32(_mm_srli_si128(sums, 8));
        blocks -= n;
    }
    return total;
}

#else
#define VF_TEXT_SIMD 0
#endif

#endif
