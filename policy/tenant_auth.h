/* Which tenant a caller is: a unix peer by uid (SO_PEERCRED), a TCP caller by
 * bearer token. Tokens are held only as SHA-256 hashes (vf_tenant_config.tokens). */
#ifndef VERIFETCH_TENANT_AUTH_H
#define VERIFETCH_TENANT_AUTH_H

#include <stdbool.h>
#include <sys/types.h>

#include "policy/config.h"

/* Longest presented token we hash; longer ones never match. */
#define VF_TOKEN_MAX 4096u

/* The tenant whose tokens include SHA-256(presented_token), or NULL (also for
 * NULL/empty/overlong tokens). Every hash of every tenant is compared with
 * CRYPTO_memcmp and there is no early exit, so the time taken does not tell
 * which entry matched, or whether one did. */
const vf_tenant_config *vf_tenant_for_token(const vf_config *cfg, const char *presented_token);

/* A unix peer: the tenant listing `uid`, else the catch-all tenant (see
 * vf_tenant_serves_any_peer in config.h), else NULL (answer 403). */
const vf_tenant_config *vf_tenant_for_uid(const vf_config *cfg, uid_t uid);

#endif
