/* Manners on the web, per tenant: the User-Agent direct fetches send and
 * whether they obey robots.txt (broker/lookup/robots*.c). */
#include "policy/config_internal.h"

#include <string.h>

#define USER_AGENT_MAX 256u
#define ROBOTS_TTL_MAX (7u * 24u * 3600u)

const char *vf_tenant_user_agent(const vf_tenant_config *t)
{
    return t->user_agent ? t->user_agent : VF_DEFAULT_USER_AGENT;
}

unsigned vf_tenant_robots_ttl_s(const vf_tenant_config *t)
{
    return t->robots_ttl_s ? t->robots_ttl_s : VF_DEFAULT_ROBOTS_TTL_S;
}

int vf_cfg_parse_manners(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                         vf_tenant_config *out)
{
    char path[VF_CFG_PATH_MAX];
    const config_setting_t *at;
    const char *v;
    if ((at = config_setting_get_member(s, "user_agent"))) {
        vf_cfg_join(path, where, "user_agent");
        if (vf_cfg_get_string(ctx, at, path, USER_AGENT_MAX, &v) != 0)
            return -1;
        /* It goes out as a header line: printable ASCII, and it names something. */
        if (!v[0] || v[0] == ' ')
            return vf_cfg_fail(ctx, at, path, "must start with a product token (\"name/version ...\")");
        for (const char *p = v; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
                return vf_cfg_fail(ctx, at, path, "must be printable ASCII");
        if (!(out->user_agent = strdup(v)))
            return vf_cfg_fail(ctx, at, path, "out of memory");
    }
    if ((at = config_setting_get_member(s, "robots"))) {
        vf_cfg_join(path, where, "robots");
        if (vf_cfg_get_string(ctx, at, path, 16, &v) != 0)
            return -1;
        if (strcmp(v, "ignore") == 0)
            out->robots_ignore = true;
        else if (strcmp(v, "obey") != 0)
            return vf_cfg_fail(ctx, at, path, "must be \"obey\" or \"ignore\"");
    }
    if ((at = config_setting_get_member(s, "robots_ttl_s"))) {
        long long ttl;
        vf_cfg_join(path, where, "robots_ttl_s");
        if (vf_cfg_get_int(ctx, at, path, 1, ROBOTS_TTL_MAX, &ttl) != 0)
            return -1;
        out->robots_ttl_s = (unsigned)ttl;
    }
    return 0;
}
