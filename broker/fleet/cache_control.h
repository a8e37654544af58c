/* The parts of an origin's Cache-Control (RFC 9111) a shared cache of
 * lookup results needs. Unknown directives are ignored; a malformed value
 * for max-age / s-maxage makes the response uncacheable (safe side). */
#ifndef VERIFETCH_FLEET_CACHE_CONTROL_H
#define VERIFETCH_FLEET_CACHE_CONTROL_H

#include <stdbool.h>

typedef struct {
    bool no_store, no_cache, is_private, malformed;
    bool has_max_age, has_s_maxage;
    unsigned max_age, s_maxage;
} vf_cache_control;

/* header may be NULL (no Cache-Control: cacheable up to the tenant's limit). */
void vf_cache_control_parse(const char *header, vf_cache_control *out);

/* Seconds this response may be served from the cache: 0 = do not store.
 * s-maxage wins over max-age (we are a shared cache); both are capped by
 * max_ttl_s, which also applies when the origin says nothing. */
unsigned vf_cache_control_ttl(const vf_cache_control *cc, unsigned max_ttl_s);

#endif
