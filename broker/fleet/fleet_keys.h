/* Names of keys in the shared store. A key never carries a URL, host,
 * tenant or provider name in clear: prefix + kind + ":" + the first 128
 * bits of SHA-256 over the NUL-separated parts, in hex. */
#ifndef VERIFETCH_FLEET_KEYS_H
#define VERIFETCH_FLEET_KEYS_H

#include <stddef.h>

#define VF_FLEET_KEY_MAX 128u   /* prefix (<= 64) + kind + ":" + 32 hex + suffix */

/* parts may contain NULL entries (hashed as an absent part, distinct from ""). */
void vf_fleet_key(char out[VF_FLEET_KEY_MAX], const char *prefix, const char *kind,
                  const char *const *parts, size_t n_parts, const char *suffix);

/* Keys that differ only by suffix (n_out of each, out[i] VF_FLEET_KEY_MAX
 * bytes): one hash for all. */
void vf_fleet_keys(char *const *out, size_t n_out, const char *prefix, const char *kind,
                   const char *const *parts, size_t n_parts, const char *const *suffixes);

/* Lowercase hex of SHA-256(data), first `hex_len` characters (<= 64) into out (hex_len + 1 bytes). */
void vf_fleet_hash_hex(const void *data, size_t len, char *out, size_t hex_len);

#endif
