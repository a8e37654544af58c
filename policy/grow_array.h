/* Capped doubling growth for the small registries (circuits, metrics). */
#ifndef VERIFETCH_GROW_ARRAY_H
#define VERIFETCH_GROW_ARRAY_H

#include <stdbool.h>
#include <stddef.h>

/* Make room for item n in *items (capacity *cap, elem bytes each), doubling
 * up to max items. False when n >= max or allocation fails (nothing changes). */
bool vf_grow_array(void **items, size_t *cap, size_t n, size_t elem, size_t max);

#endif
