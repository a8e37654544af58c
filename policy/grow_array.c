#include "policy/grow_array.h"

#include <stdlib.h>

bool vf_grow_array(void **items, size_t *cap, size_t n, size_t elem, size_t max)
{
    if (n < *cap)
        return true;
    if (n >= max)
        return false;
    size_t next = *cap ? *cap * 2 : 4;
    if (next > max)
        next = max;
    void *grown = realloc(*items, next * elem);
    if (!grown)
        return false;
    *items = grown;
    *cap = next;
    return true;
}
