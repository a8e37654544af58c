/* Caller -> tenant mapping for the unix socket (uid) and the TCP listener
 * (bearer token, compared as SHA-256 in constant time). */
#include "policy/tenant_auth.h"
#include "policy/tenant_auth_testing.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdint.h>
#include <string.h>

const vf_tenant_config *vf_tenant_for_uid(const vf_config *cfg, uid_t uid)
{
    if (!cfg)
        return NULL;
    const vf_tenant_config *any = NULL;
    for (size_t i = 0; i < cfg->n_tenants; i++) {
        const vf_tenant_config *t = &cfg->tenants[i];
        for (size_t u = 0; u < t->n_uids; u++)
            if (t->uids[u] == uid)
                return t;
        if (!any && vf_tenant_serves_any_peer(t))
            any = t;
    }
    return any;
}

const vf_tenant_config *vf_tenant_for_token_counted(const vf_config *cfg,
                                                    const char *presented_token,
                                                    size_t *comparisons)
{
    if (comparisons)
        *comparisons = 0;
    if (!cfg || !presented_token)
        return NULL;
    size_t len = strnlen(presented_token, VF_TOKEN_MAX + 1);
    if (len == 0 || len > VF_TOKEN_MAX)
        return NULL;
    unsigned char digest[SHA256_DIGEST_LENGTH];
    if (!SHA256((const unsigned char *)presented_token, len, digest))
        return NULL;

    /* found = 1 + index of the matching tenant, 0 for none. It is updated by
     * masking rather than branching, and the loops never stop early, so the
     * work done is the same whichever entry matches. The loader rejects a hash
     * shared by two entries, so at most one can match. */
    size_t found = 0;
    for (size_t i = 0; i < cfg->n_tenants; i++) {
        const vf_tenant_config *t = &cfg->tenants[i];
        for (size_t k = 0; k < t->n_tokens && t->tokens; k++) {
            size_t differs = (size_t)(CRYPTO_memcmp(digest, t->tokens[k].sha256,
                                                    sizeof digest) != 0);
            size_t mask = differs - 1;   /* all ones on a match, zero otherwise */
            found = (found & ~mask) | ((i + 1) & mask);
            if (comparisons)
                (*comparisons)++;
        }
    }
    OPENSSL_cleanse(digest, sizeof digest);
    return found ? &cfg->tenants[found - 1] : NULL;
}

const vf_tenant_config *vf_tenant_for_token(const vf_config *cfg, const char *presented_token)
{
    return vf_tenant_for_token_counted(cfg, presented_token, NULL);
}
