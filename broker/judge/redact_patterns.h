/* Pattern redaction: sensitive query values, bearer/Authorization
 * credentials, URL userinfo and well-known token shapes (private). */
#ifndef VERIFETCH_REDACT_PATTERNS_H
#define VERIFETCH_REDACT_PATTERNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include "broker/judge/redact_trigset.h"

typedef struct vf_pattern_set vf_pattern_set;

/* Compiles every rule (JIT when available). NULL with err on failure. */
vf_pattern_set *vf_pattern_set_new(char *err, size_t errlen);
void vf_pattern_set_free(vf_pattern_set *p);

/* Tests only: lower the PCRE2 match limit to force the fail-closed path. */
void vf_pattern_set_set_match_limit(vf_pattern_set *p, uint32_t limit);

/* The 3-byte prefixes any rule can start with. */
const vf_trigset *vf_pattern_set_triggers(const vf_pattern_set *p);

/* Does a rule match at t[i]? [*start, *end) is the span to replace. floor:
 * end of the last replacement (look-behinds do not see past it). md: the
 * caller's match data (one pair suffices). A PCRE2 limit or error counts as
 * a match covering the rest of the line (the whole block for a private key). */
bool vf_pattern_match(const vf_pattern_set *p, const unsigned char *t, size_t len, size_t floor,
                      size_t i, pcre2_match_data *md, size_t *start, size_t *end);

#endif
