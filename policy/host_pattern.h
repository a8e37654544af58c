/* Host names in policy (host_pattern.c): normalising, the two pattern
 * syntaxes, and a printable copy of an untrusted name. Includes nothing from
 * policy/, so egress, ordering and circuits can all use it. */
#ifndef VERIFETCH_HOST_PATTERN_H
#define VERIFETCH_HOST_PATTERN_H

#include <stdbool.h>
#include <stddef.h>

#define VF_HOST_NAME_MAX  253u   /* longest DNS name, without the trailing dot */

/* Lower-case, one trailing dot dropped, into buf (>= VF_HOST_NAME_MAX + 1).
 * false when host is NULL, empty or too long. */
bool vf_host_normalize(const char *host, char *buf, size_t buflen);

/* Ordering rule patterns: "*", or an optional leading "*." then dot-separated
 * labels of letters, digits, '-', '_' (':' too, for IPv6 literals), none empty,
 * <= 253 chars in all. Case does not matter. Invalid patterns never match. */
bool vf_host_pattern_valid(const char *pattern);

/* Host pattern matching: case-insensitive (ASCII), one trailing dot on `host`
 * ignored. "*.example.com" matches a.example.com and a.b.example.com but not
 * example.com or badexample.com; any other pattern matches only itself. Used for
 * ordering rules and for egress host rules (in vf_host_pattern_parse's form). */
bool vf_host_pattern_match(const char *pattern, const char *host);

/* Validates and normalizes a configured egress host pattern into out
 * (lowercase, trailing dot removed; outlen >= VF_HOST_NAME_MAX + 1). Returns
 * NULL on success, otherwise a static reason ("'*' is only allowed as a
 * leading \"*.\" ..."). */
const char *vf_host_pattern_parse(const char *text, char *out, size_t outlen);

/* host cut to outlen - 1 bytes, with bytes outside [A-Za-z0-9._-] replaced
 * by '?', NUL-terminated (a NULL host gives ""). */
void vf_host_printable(const char *host, char *out, size_t outlen);

#endif
