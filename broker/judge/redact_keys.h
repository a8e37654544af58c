/* The one list of query/fragment parameter names whose values are secret
 * (private to redaction; used by the text pattern and the URL parser). */
#ifndef VERIFETCH_REDACT_KEYS_H
#define VERIFETCH_REDACT_KEYS_H

#include <stdbool.h>
#include <stddef.h>

/* NULL-terminated, lowercase, characters [a-z0-9_-] only. */
extern const char *const vf_redact_sensitive_keys[];

/* ASCII case-insensitive exact comparison against the list. */
bool vf_redact_key_is_sensitive(const char *key, size_t len);

#endif
