#include "worker/content/page_map.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

size_t vf_page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

size_t vf_page_round(size_t n)
{
    size_t pg = vf_page_size();
    return n > SIZE_MAX - pg ? SIZE_MAX : (n + pg - 1) & ~(pg - 1);
}

void *vf_page_map_resize(void *old, size_t old_len, size_t len)
{
    void *p = old ? mremap(old, old_len, len, MREMAP_MAYMOVE)
                  : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}
