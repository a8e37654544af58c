/* Parameter names whose values are credentials or replayable state. "state"
 * and "code" are OAuth: a leaked authorization code or state can be replayed.
 * Only the exact names count, so "?keyboard=" or "&tokenizer=" survive. */
#include "broker/judge/redact_keys.h"

#include <string.h>
#include <strings.h>

const char *const vf_redact_sensitive_keys[] = {
    "key", "api_key", "apikey", "api-key",
    "token", "access_token", "refresh_token", "id_token",
    "auth", "auth_token", "authorization",
    "secret", "client_secret",
    "signature", "sig",
    "password", "passwd", "pwd",
    "session", "sessionid", "session_id", "sid",
    "state", "code",
    "x-amz-signature", "x-amz-credential", "x-amz-security-token",
    NULL,
};

bool vf_redact_key_is_sensitive(const char *key, size_t len)
{
    for (const char *const *k = vf_redact_sensitive_keys; *k; k++)
        if (strlen(*k) == len && strncasecmp(*k, key, len) == 0)
            return true;
    return false;
}
