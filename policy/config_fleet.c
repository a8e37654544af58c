/* The fleet settings of the config file: state (the shared store),
 * providers[].quota and tenants[].cache. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/config_internal.h"
#include "policy/fleet_config.h"

#define REDIS_URL_MAX 512u
#define HOSTS_MAX     256u

static const char *const state_members[] = { "redis", "password_file", "key_prefix", NULL };
static const char *const pquota_members[] = { "requests_per_minute", "concurrent", NULL };
static const char *const cache_members[] = { "max_ttl_s", "max_entries", "private_hosts", NULL };

static int int_member(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where, const char *name,
                      long long min, long long max, long long *out)
{
    const config_setting_t *at = config_setting_get_member(s, name);
    char path[VF_CFG_PATH_MAX];
    vf_cfg_join(path, where, name);
    return at ? vf_cfg_get_int(ctx, at, path, min, max, out) : 0;
}

/* "redis://HOST:PORT" (HOST a name or IPv4, no credentials: the password comes
 * from a file) or "unix:/absolute/path". */
static int parse_redis_url(vf_cfg_ctx *ctx, const config_setting_t *at, const char *url, vf_state_config *st)
{
    const char *where = "state.redis";
    if (strncmp(url, "unix:", 5) == 0) {
        const char *path = url + 5;
        if (path[0] != '/' || strlen(path) > 107)
            return vf_cfg_fail(ctx, at, where, "unix: needs an absolute socket path of at most 107 bytes");
        st->unix_path = strdup(path);
        return st->unix_path ? 0 : vf_cfg_fail(ctx, at, where, "out of memory");
    }
    if (strncmp(url, "redis://", 8) != 0)
        return vf_cfg_fail(ctx, at, where, "must be \"redis://HOST:PORT\" or \"unix:/path\"");
    const char *host = url + 8, *colon = strrchr(host, ':');
    if (strchr(host, '@'))
        return vf_cfg_fail(ctx, at, where, "no credentials in the URL; use state.password_file");
    size_t hlen = colon ? (size_t)(colon - host) : strlen(host);
    if (hlen == 0 || hlen > 253)
        return vf_cfg_fail(ctx, at, where, "missing or overlong host");
    for (size_t i = 0; i < hlen; i++)
        if (!isalnum((unsigned char)host[i]) && host[i] != '.' && host[i] != '-')
            return vf_cfg_fail(ctx, at, where, "host must be a name or an IPv4 address");
    long port = 6379;
    if (colon) {
        char *end = NULL;
        port = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end != '\0' || port < 1 || port > 65535)
            return vf_cfg_fail(ctx, at, where, "port must be 1..65535");
    }
    st->host = strndup(host, hlen);
    st->port = (int)port;
    return st->host ? 0 : vf_cfg_fail(ctx, at, where, "out of memory");
}

int vf_cfg_parse_state(vf_cfg_ctx *ctx, const config_setting_t *s, vf_config *cfg)
{
    vf_state_config *st = &cfg->state;
    if (vf_cfg_want_group(ctx, s, "state") != 0 || vf_cfg_check_members(ctx, s, "state", state_members) != 0)
        return -1;
    const config_setting_t *at = config_setting_get_member(s, "redis");
    const char *text = NULL;
    if (!at)
        return vf_cfg_fail(ctx, s, "state.redis", "missing (the shared store's address)");
    if (vf_cfg_get_string(ctx, at, "state.redis", REDIS_URL_MAX, &text) != 0)
        return -1;
    if (!(st->redis = strdup(text)))
        return vf_cfg_fail(ctx, at, "state.redis", "out of memory");
    if (parse_redis_url(ctx, at, text, st) != 0)
        return -1;
    if ((at = config_setting_get_member(s, "password_file"))) {
        char why[512];
        if (vf_cfg_get_string(ctx, at, "state.password_file", VF_CFG_STRING_MAX, &text) != 0)
            return -1;
        if (vf_cfg_key_from_file(text, &st->password, why, sizeof why) != 0)
            return vf_cfg_fail(ctx, at, "state.password_file", "%s", why);
    }
    text = VF_STATE_DEFAULT_PREFIX;
    if ((at = config_setting_get_member(s, "key_prefix"))) {
        if (vf_cfg_get_string(ctx, at, "state.key_prefix", VF_STATE_PREFIX_MAX + 1, &text) != 0)
            return -1;
        for (const char *p = text; *p; p++)
            if (!isgraph((unsigned char)*p))
                return vf_cfg_fail(ctx, at, "state.key_prefix", "must be printable ASCII without spaces");
        if (strlen(text) > VF_STATE_PREFIX_MAX)
            return vf_cfg_fail(ctx, at, "state.key_prefix", "at most %u characters", VF_STATE_PREFIX_MAX);
    }
    if (!(st->key_prefix = strdup(text)))
        return vf_cfg_fail(ctx, s, "state", "out of memory");
    return 0;
}

int vf_cfg_parse_provider_quota(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                                vf_provider_quota *out)
{
    if (vf_cfg_want_group(ctx, s, where) != 0 || vf_cfg_check_members(ctx, s, where, pquota_members) != 0)
        return -1;
    long long rpm = 0, concurrent = 0;
    if (int_member(ctx, s, where, "requests_per_minute", 0, VF_QUOTA_MAX, &rpm) != 0 ||
        int_member(ctx, s, where, "concurrent", 0, VF_QUOTA_MAX, &concurrent) != 0)
        return -1;
    out->requests_per_minute = (unsigned)rpm;
    out->concurrent = (unsigned)concurrent;
    return 0;
}

static bool valid_host_pattern(const char *h)
{
    size_t n = strlen(h);
    if (n == 0 || n > 253 || (h[0] == '.' && n == 1))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)h[i]) || isdigit((unsigned char)h[i]) || h[i] == '.' || h[i] == '-'))
            return false;
    return true;
}

int vf_cfg_parse_cache(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where, vf_cache_config *out)
{
    if (vf_cfg_want_group(ctx, s, where) != 0 || vf_cfg_check_members(ctx, s, where, cache_members) != 0)
        return -1;
    long long ttl = 300, entries = VF_CACHE_DEFAULT_ENTRIES;
    if (int_member(ctx, s, where, "max_ttl_s", 1, VF_CACHE_MAX_TTL_S, &ttl) != 0 ||
        int_member(ctx, s, where, "max_entries", 1, VF_CACHE_MAX_ENTRIES, &entries) != 0)
        return -1;
    out->enabled = true;
    out->max_ttl_s = (unsigned)ttl;
    out->max_entries = (unsigned)entries;
    const config_setting_t *list = config_setting_get_member(s, "private_hosts");
    if (!list)
        return 0;
    char path[VF_CFG_PATH_MAX];
    vf_cfg_join(path, where, "private_hosts");
    int n = 0;
    if (vf_cfg_want_seq(ctx, list, path, HOSTS_MAX, &n) != 0)
        return -1;
    out->private_hosts = calloc((size_t)n + 1, sizeof *out->private_hosts);
    if (!out->private_hosts)
        return vf_cfg_fail(ctx, list, path, "out of memory");
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(list, (unsigned)i);
        char epath[VF_CFG_PATH_MAX];
        const char *h = NULL;
        vf_cfg_index(epath, path, i);
        if (vf_cfg_get_string(ctx, e, epath, 254, &h) != 0)
            return -1;
        if (!valid_host_pattern(h))
            return vf_cfg_fail(ctx, e, epath,
                               "must be a lower-case host (\"intranet.example\") or a suffix (\".corp.example\")");
        if (!(out->private_hosts[i] = strdup(h)))
            return vf_cfg_fail(ctx, e, epath, "out of memory");
        out->n_private_hosts++;
    }
    return 0;
}

bool vf_cache_host_private(const vf_cache_config *c, const char *host)
{
    if (!c || !host)
        return false;
    size_t hn = strlen(host);
    for (size_t i = 0; i < c->n_private_hosts; i++) {
        const char *p = c->private_hosts[i];
        size_t pn = strlen(p);
        if (p[0] == '.') {
            /* ".corp.example" covers corp.example and every name under it */
            if ((hn == pn - 1 && strcmp(host, p + 1) == 0) || (hn > pn && strcmp(host + hn - pn, p) == 0))
                return true;
        } else if (strcmp(host, p) == 0) {
            return true;
        }
    }
    return false;
}

void vf_state_config_free(vf_state_config *s)
{
    if (!s)
        return;
    free(s->redis);
    free(s->unix_path);
    free(s->host);
    vf_cfg_wipe_free(s->password);
    free(s->key_prefix);
    memset(s, 0, sizeof *s);
}

void vf_cache_config_free(vf_cache_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_private_hosts; i++)
        free(c->private_hosts[i]);
    free(c->private_hosts);
    memset(c, 0, sizeof *c);
}
