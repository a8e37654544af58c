/* Which lookups share a cache entry: the same tenant, the same URL after
 * normalisation (scheme and host lower-cased, default port and fragment
 * dropped, empty path = "/") and the same output options. The key is a hash,
 * so neither the URL nor the tenant appears in it. */
#ifndef VERIFETCH_FLEET_CACHE_KEY_H
#define VERIFETCH_FLEET_CACHE_KEY_H

#include <stddef.h>

#include "broker/fleet/fleet_keys.h"

/* malloc'd normalised URL, or NULL when url does not parse. */
char *vf_cache_normalize_url(const char *url);

/* Lower-case host of url into buf (IPv6 without brackets); 0, or -1. */
int vf_cache_url_host(const char *url, char *buf, size_t len);

/* 0, or -1 when url does not parse (then nothing is cached). */
int vf_cache_key(char out[VF_FLEET_KEY_MAX], const char *prefix, const char *tenant, const char *url,
                 const char *options);

#endif
