/* Shared helpers for the config tests: a private temp dir per test, files in
 * it, and "load this text, expect this error at this line". */
#ifndef VF_TEST_CONFIG_FIXTURE_H
#define VF_TEST_CONFIG_FIXTURE_H

#include <stddef.h>
#include <sys/types.h>

#include "policy/config.h"

/* The key every fixture key file holds; no error message may contain it. */
#define FX_SECRET "s3cr3t-VALUE-0123456789"

extern char fx_dir[64];
extern char fx_conf[128];

/* Also sets VF_TEST_ENV_KEY=FX_SECRET for configs that use key_env. */
void fx_setup(void);
void fx_teardown(void);

/* Writes dir/name with the given mode; returns a malloc'd path. */
char *fx_write(const char *name, const char *content, size_t len, mode_t mode);
/* A 0600 key file holding FX_SECRET plus a newline. */
char *fx_key_file(void);
/* Formats the config text (printf-style) into fx_conf and loads it. */
int fx_load(vf_config *cfg, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Loads and asserts failure: the message starts "<fx_conf>:<line>: " (line 0:
 * "<fx_conf>: "), contains `what`, is one line and never carries a secret. */
void fx_expect_error(int line, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A tenant whose 4th line is `line4` (lines: 1 "tenants = (", 2 "{", 3 name, 4 line4). */
#define FX_TENANT_WITH(line4) "tenants = (\n  {\n    name = \"t\";\n    " line4 "\n  }\n);\n"

/* Tenant "t" with providers[0] direct and providers[1] an http_api whose
 * endpoint is on line 6, credential on line 7 and `extra` on line 8. */
#define FX_API_PROVIDER(endpoint, credential, extra)                                      \
    "tenants = ( {\n"                                                                    \
    "  name = \"t\";\n"                                                                  \
    "  providers = (\n"                                                                  \
    "    { name = \"direct\"; kind = \"direct\"; },\n"                                   \
    "    { name = \"api\"; kind = \"http_api\";\n"                                       \
    "      endpoint = \"" endpoint "\";\n"                                               \
    "      credential = { " credential " };\n"                                           \
    "      " extra "\n"                                                                  \
    "    }\n"                                                                            \
    "  );\n"                                                                             \
    "} );\n"

#endif
