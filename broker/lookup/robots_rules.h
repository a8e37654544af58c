/* robots.txt as RFC 9309 reads it: the groups whose user-agent matches our
 * product token (else the "*" groups), their allow/disallow rules with the
 * "*" and "$" wildcards, the longest match deciding and allow winning a tie.
 * Pure functions over the file's text; fetching and caching are robots.c's. */
#ifndef VERIFETCH_ROBOTS_RULES_H
#define VERIFETCH_ROBOTS_RULES_H

#include <stdbool.h>
#include <stddef.h>

#define VF_ROBOTS_MAX_BYTES (500u * 1024u)   /* RFC 9309: parse at least 500 KiB */

/* The product token of a User-Agent ("verifetch" of "verifetch/0.1 (+x)"),
 * into out (lowercase). */
void vf_robots_product_token(const char *user_agent, char *out, size_t len);

/* May `token` fetch `path_query` (the URL's path, plus "?query" when it has
 * one) under robots.txt `text`? The first VF_ROBOTS_MAX_BYTES are read.
 * *rule gets the deciding line's pattern ("" when none decided), for the receipt. */
bool vf_robots_allows(const char *text, size_t len, const char *token, const char *path_query,
                      char *rule, size_t rule_len);

#endif
