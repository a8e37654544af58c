/* Private to policy/config*.c: error formatting, typed getters and the
 * section parsers. Every getter checks the libconfig type itself, so an int
 * where a string belongs is an error rather than a silent conversion. */
#ifndef VERIFETCH_CONFIG_INTERNAL_H
#define VERIFETCH_CONFIG_INTERNAL_H

#include <libconfig.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "policy/config.h"

#define VF_CFG_PATH_MAX     256   /* "tenants[0].providers[1].credential.key_file" */
#define VF_CFG_FILE_MAX     (1024u * 1024u)
#define VF_CFG_CA_MAX       (4u * 1024u * 1024u)
#define VF_CFG_KEY_MAX      4096u
#define VF_CFG_KEY_MIN      8u
#define VF_CFG_LIST_MAX     256u  /* uids, CIDRs, providers, tenants, markers */
#define VF_CFG_STRING_MAX   2048u
#define VF_CFG_COST_MAX     1e9   /* providers[].cost and ordering.budget */

typedef struct {
    const char *path;     /* the file being loaded */
    char *err;
    size_t errlen;
} vf_cfg_ctx;

/* Writes "<file>:<line>: <where>: <message>" (line omitted when unknown) and
 * returns -1, so callers can `return vf_cfg_fail(...)`. */
int vf_cfg_fail(vf_cfg_ctx *ctx, const config_setting_t *at, const char *where,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Same, for failures not tied to a setting ("<message>" with no location). */
int vf_cfg_fail_plain(vf_cfg_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void vf_cfg_join(char *out, const char *parent, const char *member);
void vf_cfg_index(char *out, const char *parent, int index);

/* Members of `group` must all appear in the NULL-terminated `allowed`. */
int vf_cfg_check_members(vf_cfg_ctx *ctx, const config_setting_t *group, const char *where,
                         const char *const *allowed);

int vf_cfg_want_group(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where);
/* An array [..] or list (..) of at most max elements; *count gets its length. */
int vf_cfg_want_seq(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                    unsigned max, int *count);
int vf_cfg_get_string(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                      size_t max_len, const char **out);
int vf_cfg_get_int(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                   long long min, long long max, long long *out);
int vf_cfg_get_bool(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where, bool *out);
/* Integers are accepted too: "cost = 0;" means 0.0. */
int vf_cfg_get_number(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                      double min, double max, double *out);

/* Reports a validator's "sub.path: text" (the path relative to `group`, which
 * sits at `where`) at the line of the deepest setting the path names; a first
 * segment "a/b" takes the line of whichever of a, b the file sets. When the
 * path names a setting the file leaves out, `if_unset` is appended. */
int vf_cfg_fail_relative(vf_cfg_ctx *ctx, const config_setting_t *group, const char *where,
                         const char *message, const char *if_unset);

/* Name rule shared by tenants and providers: [a-z0-9_-]{1,32}. */
bool vf_cfg_valid_name(const char *name);

/* Rejects integer literals libconfig 1.5 would silently wrap (it has no
 * overflow check) and files too long for its 16-bit line numbers. */
int vf_cfg_lexcheck(vf_cfg_ctx *ctx, const char *text, size_t len);

/* Secrets and files. `why` gets a message that never contains key bytes. */
int vf_cfg_key_from_file(const char *path, char **secret, char *why, size_t whylen);
int vf_cfg_key_from_env(const char *name, char **secret, char *why, size_t whylen);
/* Reads a PEM bundle; *missing is set (and 0 returned) when the file does not exist. */
int vf_cfg_read_ca(const char *path, uint8_t **pem, size_t *len, bool *missing, char *why,
                   size_t whylen);
void vf_cfg_wipe_free(char *secret);

/* Section parsers: fill *out from `s` (already known to be a group). */
int vf_cfg_parse_provider(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                          vf_provider_config *out);
int vf_cfg_parse_classify(vf_cfg_ctx *ctx, const config_setting_t *s, vf_config *cfg);
int vf_cfg_parse_tenant_classify(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                                 vf_tenant_config *out);
int vf_cfg_parse_tenant(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                        vf_tenant_config *out);
/* tenants[i].ordering into t->ordering; needs t->providers parsed already. */
int vf_cfg_parse_ordering(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                          vf_tenant_config *t);
/* tenants[i].circuit: the defaults with the given keys overridden; sets has_circuit. */
int vf_cfg_parse_circuit(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                         vf_tenant_config *t);

/* Fleet settings (policy/config_fleet.c): state, providers[].quota, tenants[].cache. */
int vf_cfg_parse_state(vf_cfg_ctx *ctx, const config_setting_t *s, vf_config *cfg);
int vf_cfg_parse_provider_quota(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                                vf_provider_quota *out);
int vf_cfg_parse_cache(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where, vf_cache_config *out);

/* listen.tcp: a loopback "127.0.0.1:PORT" / "[::1]:PORT" into cfg->tcp_*. */
int vf_cfg_parse_tcp_listen(vf_cfg_ctx *ctx, const config_setting_t *at, vf_config *cfg);
/* tenants[i].tokens: "sha256:<64 hex>" entries into t->tokens. */
int vf_cfg_parse_tokens(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                        vf_tenant_config *t);
/* Fails when tenant t (setting s at `where`) shares a token hash with prev. */
int vf_cfg_check_tokens_unique(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                               const vf_tenant_config *t, const vf_tenant_config *prev,
                               size_t prev_index);

/* name is 1..max bytes, each an ASCII letter or digit or one of `also`:
 * the shape of every name a config gives (header, query, environment). */
bool vf_cfg_name_of(const char *name, size_t max, const char *also);

/* An HTTP header name token (RFC 9110) of at most VF_CFG_HEADER_NAME_MAX
 * characters (policy/config_request.c, with the other header rules). */
#define VF_CFG_HEADER_NAME_MAX 64u
bool vf_cfg_header_token(const char *name);
/* providers[i].method/body/headers (policy/config_request.c); needs endpoint
 * and credential parsed already. */
int vf_cfg_parse_provider_request(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                                  vf_provider_config *out);
void vf_cfg_provider_request_free(vf_provider_config *p);

/* tenants[i].user_agent, robots, robots_ttl_s (policy/config_manners.c). */
int vf_cfg_parse_manners(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                         vf_tenant_config *out);

/* The built-in tenant: "default", any peer, provider "direct". */
int vf_cfg_default_tenant(vf_tenant_config *out);
void vf_cfg_provider_free(vf_provider_config *p);
void vf_cfg_tenant_free(vf_tenant_config *t);

#endif
