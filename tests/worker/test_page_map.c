/* Large buffers live in aligned huge-page units (worker/content/page_map.h):
 * their lengths, alignment and contents across growth, the VMA flag that
 * asks the kernel for huge pages, and the text buffer's ways in and out of
 * such a mapping. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "worker/content/html_dom.h"
#include "worker/content/main_content.h"
#include "worker/content/page_map.h"
#include "worker/content/text_buf.h"

#define MIB ((size_t)1 << 20)

static bool huge_aligned(const void *p)
{
    return ((uintptr_t)p & (VF_PAGE_MAP_HUGE - 1)) == 0;
}

/* The VmFlags line of the /proc/self/smaps entry holding p. */
static bool vma_flag(const void *p, const char *flag)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    cr_assert_not_null(f);
    char line[512];
    bool inside = false, found = false;
    while (fgets(line, sizeof line, f)) {
        uintptr_t lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            char want[8];
            snprintf(want, sizeof want, " %s", flag);
            found = strstr(line, want) != NULL;
            break;
        }
    }
    fclose(f);
    return found;
}

static bool thp_never(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return true;
    char line[128] = "";
    bool never = !fgets(line, sizeof line, f) || strstr(line, "[never]") != NULL;
    fclose(f);
    return never;
}

Test(page_map, lengths_are_pages_below_the_threshold_and_huge_units_from_it)
{
    size_t pg = vf_page_size();
    cr_assert_eq(vf_page_map_len(1), pg);
    cr_assert_eq(vf_page_map_len(VF_PAGE_MAP_HUGE_MIN - 1), VF_PAGE_MAP_HUGE_MIN);
    cr_assert_eq(vf_page_map_len(VF_PAGE_MAP_HUGE_MIN), VF_PAGE_MAP_HUGE);
    cr_assert_eq(vf_page_map_len(VF_PAGE_MAP_HUGE + 1), VF_PAGE_MAP_HUGE + pg, "a small tail stays small");
    cr_assert_eq(vf_page_map_len(VF_PAGE_MAP_HUGE + VF_PAGE_MAP_HUGE / 2), 2 * VF_PAGE_MAP_HUGE);
    cr_assert_eq(vf_page_map_len(SIZE_MAX - 5), SIZE_MAX);
}

Test(page_map, a_large_mapping_is_aligned_and_asks_for_huge_pages)
{
    size_t len = vf_page_map_len(3 * MIB);
    char *p = vf_page_map_resize(NULL, 0, len);
    cr_assert_not_null(p);
    cr_assert(huge_aligned(p), "%p is not on a 2 MiB boundary", (void *)p);
    memset(p, 0x5a, len);
    if (!thp_never())
        cr_assert(vma_flag(p, "hg"), "the mapping does not carry MADV_HUGEPAGE");
    munmap(p, len);
}

Test(page_map, a_small_mapping_asks_for_nothing)
{
    size_t len = vf_page_map_len(256u << 10);
    char *p = vf_page_map_resize(NULL, 0, len);
    cr_assert_not_null(p);
    cr_assert_not(vma_flag(p, "hg"));
    munmap(p, len);
}

/* Small to large (moved onto an aligned range), then larger again: the bytes
 * written at each size survive every move. */
Test(page_map, growing_across_the_threshold_keeps_the_bytes_and_the_alignment)
{
    size_t small = vf_page_map_len(300u << 10);
    unsigned char *p = vf_page_map_resize(NULL, 0, small);
    cr_assert_not_null(p);
    for (size_t i = 0; i < small; i++)
        p[i] = (unsigned char)(i * 7);
    size_t mid = vf_page_map_len(VF_PAGE_MAP_HUGE_MIN + 1);
    p = vf_page_map_resize(p, small, mid);
    cr_assert_not_null(p);
    cr_assert(huge_aligned(p));
    for (size_t i = 0; i < small; i++)
        cr_assert_eq(p[i], (unsigned char)(i * 7), "byte %zu lost in the move", i);
    for (size_t i = small; i < mid; i++)
        cr_assert_eq(p[i], 0, "fresh byte %zu is not zero", i);
    memset(p + small, 0xc3, mid - small);
    size_t big = vf_page_map_len(5 * MIB);
    p = vf_page_map_resize(p, mid, big);
    cr_assert_not_null(p);
    cr_assert(huge_aligned(p));
    cr_assert_eq(p[small - 1], (unsigned char)((small - 1) * 7));
    cr_assert_eq(p[mid - 1], 0xc3);
    cr_assert_eq(p[big - 1], 0);
    if (!thp_never())
        cr_assert(vma_flag(p + big - 1, "hg"));
    munmap(p, big);
}

Test(text_buf, a_heap_buffer_moves_into_a_mapping_with_its_bytes)
{
    vf_tbuf b;
    vf_tbuf_init(&b, 8 * MIB);
    cr_assert(vf_tbuf_append(&b, "head:", 5));
    cr_assert(vf_tbuf_move_to_mapping(&b, 2 * MIB));
    cr_assert(b.mapped);
    cr_assert(huge_aligned(b.data));
    cr_assert_str_eq(b.data, "head:");
    static char run[64u << 10];
    memset(run, 'r', sizeof run);
    for (int i = 0; i < 64; i++) /* 4 MiB: grows past the first unit */
        cr_assert(vf_tbuf_append(&b, run, sizeof run));
    cr_assert_eq(b.len, 5 + 64 * sizeof run);
    cr_assert(strncmp(b.data, "head:rrr", 8) == 0);
    cr_assert_eq(b.data[b.len], '\0');
    cr_assert_not(vf_tbuf_move_to_mapping(&b, 2 * MIB), "already mapped");
    vf_tbuf_free(&b);
}

Test(text_buf, a_moved_buffer_keeps_its_ceiling)
{
    vf_tbuf b;
    vf_tbuf_init(&b, 10);
    cr_assert(vf_tbuf_move_to_mapping(&b, 2 * MIB));
    cr_assert_not(vf_tbuf_append(&b, "0123456789abc", 13));
    cr_assert(b.truncated);
    cr_assert_eq(b.len, 10);
    cr_assert_str_eq(b.data, "0123456789");
    vf_tbuf_free(&b);
}

Test(text_buf, take_any_hands_over_a_mapping_or_the_heap)
{
    vf_tbuf m;
    vf_tbuf_init_mapped(&m, 8 * MIB, VF_PAGE_MAP_HUGE_MIN);
    cr_assert(vf_tbuf_append(&m, "mapped text", 11));
    size_t len, map_len;
    char *t = vf_tbuf_take_any(&m, &len, &map_len);
    cr_assert_not_null(t);
    cr_assert_eq(len, 11);
    cr_assert_str_eq(t, "mapped text");
    cr_assert_eq(map_len, VF_PAGE_MAP_HUGE);
    cr_assert_null(m.data);
    vf_tbuf_unmap_taken(t, map_len);

    vf_tbuf h;
    vf_tbuf_init(&h, 100);
    cr_assert(vf_tbuf_append(&h, "heap text", 9));
    t = vf_tbuf_take_any(&h, &len, &map_len);
    cr_assert_str_eq(t, "heap text");
    cr_assert_eq(map_len, 0);
    vf_tbuf_unmap_taken(t, map_len); /* free() */
}

/* Once a prefix is given back the mapping is no longer whole: nothing to
 * hand over. */
Test(text_buf, take_any_refuses_a_mapping_with_a_prefix_given_back)
{
    vf_tbuf m;
    vf_tbuf_init_mapped(&m, 8 * MIB, 64u << 10);
    static char run[32u << 10];
    memset(run, 'x', sizeof run);
    cr_assert(vf_tbuf_append(&m, run, sizeof run));
    vf_tbuf_release_before(&m, 16u << 10);
    size_t len, map_len;
    cr_assert_null(vf_tbuf_take_any(&m, &len, &map_len));
    cr_assert_eq(len, 0);
    cr_assert_null(m.data);
}

/* A page of n short paragraphs, parsed. */
static vf_dom *paragraphs(size_t n)
{
    static const char para[] = "<p>Paragraph: the river by the stone holds a garden, and a window.</p>";
    size_t len = n * (sizeof para - 1);
    char *html = malloc(len + 1);
    cr_assert_not_null(html);
    for (size_t i = 0; i < n; i++)
        memcpy(html + i * (sizeof para - 1), para, sizeof para - 1);
    html[len] = '\0';
    vf_dom *d = vf_html_parse(html, len, NULL, NULL);
    cr_assert_not_null(d);
    free(html);
    return d;
}

/* The scorer's per-element stats of a large page (20,000 paragraphs: over
 * half a MiB) are a huge-page mapping of their own, gone once the pick is
 * settled; a small page's come from the heap. */
Test(page_map, a_large_pages_element_stats_are_a_mapping_of_their_own)
{
    vf_dom *d = paragraphs(20000);
    vf_main_pick pick;
    (void)vf_main_pick_content(vf_dom_root(d), &pick);
    cr_assert_geq(pick.stats_mapped, VF_PAGE_MAP_HUGE_MIN, "stats of %zu elements are not mapped", pick.n_stats);
    cr_assert(huge_aligned(pick.stats));
    if (!thp_never())
        cr_assert(vma_flag(pick.stats, "hg"), "the stats' mapping does not carry MADV_HUGEPAGE");
    vf_main_pick_settle(vf_dom_root(d), &pick);
    cr_assert_null(pick.stats);
    cr_assert_eq(pick.stats_mapped, 0);
    vf_main_pick_free(vf_dom_root(d), &pick);
    vf_dom_free(d);

    d = paragraphs(50);
    (void)vf_main_pick_content(vf_dom_root(d), &pick);
    cr_assert_not_null(pick.stats);
    cr_assert_eq(pick.stats_mapped, 0, "a small page's stats come from the heap");
    vf_main_pick_free(vf_dom_root(d), &pick);
    vf_dom_free(d);
}
