/* robots.txt files by origin ("scheme://host:port"), shared by every tenant
 * (each judges freshness by its own robots_ttl_s). At most 1024 origins; the
 * oldest makes room. Thread-safe. */
#ifndef VERIFETCH_ROBOTS_CACHE_H
#define VERIFETCH_ROBOTS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct vf_robots_cache vf_robots_cache;

vf_robots_cache *vf_robots_cache_new(void);
void vf_robots_cache_free(vf_robots_cache *c);

/* An entry fetched less than ttl_ms ago: *found, and a copy of its text in
 * *rules (NULL = the origin allows everything). */
void vf_robots_cache_get(vf_robots_cache *c, const char *origin, int64_t ttl_ms, bool *found, char **rules,
                         size_t *len);
/* Stores a copy (rules NULL = allow everything), replacing the origin's old entry. */
void vf_robots_cache_put(vf_robots_cache *c, const char *origin, const char *rules, size_t len);

#endif
