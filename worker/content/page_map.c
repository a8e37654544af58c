#include "worker/content/page_map.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

size_t vf_page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t round_to(size_t n, size_t unit)
{
    return n > SIZE_MAX - unit ? SIZE_MAX : (n + unit - 1) & ~(unit - 1);
}

size_t vf_page_round(size_t n)
{
    return round_to(n, vf_page_size());
}

size_t vf_page_map_len(size_t n)
{
    if (n < VF_PAGE_MAP_HUGE_MIN)
        return vf_page_round(n);
    /* Past the first unit, a tail under half a unit stays in small pages
     * (a body of 8 MiB and its NUL would hold a whole unit more for 1 byte). */
    size_t tail = n & (VF_PAGE_MAP_HUGE - 1);
    if (n > VF_PAGE_MAP_HUGE && tail != 0 && tail < VF_PAGE_MAP_HUGE / 2)
        return vf_page_round(n);
    return round_to(n, VF_PAGE_MAP_HUGE);
}

/* len bytes starting on a huge-page boundary: map one unit more than asked
 * and give back the ragged ends. */
static void *map_aligned(size_t len)
{
    if (len > SIZE_MAX - VF_PAGE_MAP_HUGE)
        return NULL;
    size_t wide = len + VF_PAGE_MAP_HUGE;
    char *p = mmap(NULL, wide, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    char *at = (char *)(((uintptr_t)p + VF_PAGE_MAP_HUGE - 1) & ~(uintptr_t)(VF_PAGE_MAP_HUGE - 1));
    if (at > p)
        munmap(p, (size_t)(at - p));
    if (p + wide > at + len)
        munmap(at + len, (size_t)(p + wide - (at + len)));
    return at;
}

static void *map_huge(void *old, size_t old_len, size_t len)
{
    /* An aligned mapping resized in place stays aligned; otherwise move onto
     * a fresh aligned range, so pages already huge move as whole units. */
    bool aligned = ((uintptr_t)old & (VF_PAGE_MAP_HUGE - 1)) == 0;
    if (old && aligned && mremap(old, old_len, len, 0) != MAP_FAILED) {
        (void)madvise(old, len, MADV_HUGEPAGE);
        return old;
    }
    char *at = map_aligned(len);
    if (!at)
        return NULL;
    size_t keep = old_len < len ? old_len : len;
    if (old && mremap(old, old_len, keep, MREMAP_MAYMOVE | MREMAP_FIXED, at) == MAP_FAILED) {
        munmap(at, len);
        return NULL;
    }
    /* A moved mapping keeps its old flags; the tail past keep is still the
     * fresh one. Failure (THP off in this kernel) leaves small pages. */
    (void)madvise(at, len, MADV_HUGEPAGE);
    return at;
}

void *vf_page_map_resize(void *old, size_t old_len, size_t len)
{
    if (len >= VF_PAGE_MAP_HUGE_MIN && (!old || len != old_len))
        return map_huge(old, old_len, len);
    void *p = old ? mremap(old, old_len, len, MREMAP_MAYMOVE)
                  : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}
