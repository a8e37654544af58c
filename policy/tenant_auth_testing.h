/* Test-only view of policy/tenant_auth.c: the token lookup with a count of
 * hash comparisons, so a test can check none is skipped. */
#ifndef VERIFETCH_TENANT_AUTH_TESTING_H
#define VERIFETCH_TENANT_AUTH_TESTING_H

#include <stddef.h>

#include "policy/tenant_auth.h"

/* vf_tenant_for_token; *comparisons (if non-NULL) gets the number of
 * CRYPTO_memcmp calls made. */
const vf_tenant_config *vf_tenant_for_token_counted(const vf_config *cfg,
                                                    const char *presented_token,
                                                    size_t *comparisons);

#endif
