/* The classify sections: the daemon-wide extra wall markers (which ADD to
 * the built-in families) and a tenant's list of families switched off. */
#include "policy/config.h"
#include "policy/config_internal.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARKERS_MAX      128u
#define MARKER_LEN_MAX   512u

/* In the order of vf_wall (broker/judge/wall.h) from bot_challenge on; bit
 * i+1 of classify_disabled is family i. A test keeps the two in step. */
const char *const vf_cfg_wall_families[] = {
    "bot_challenge", "access_denied", "rate_limited", "consent_wall", "paywall",
    "login_wall", "soft_404", "js_required", NULL,
};

static const char *const classify_members[] = { "extra_markers", "interstitial_markers", NULL };
static const char *const tenant_classify_members[] = { "disable", NULL };

static int check_marker(vf_cfg_ctx *ctx, const config_setting_t *at, const char *where,
                        const char *pattern)
{
    /* "family: pattern" is checked as the pattern after the prefix when the
     * prefix names a family; anything else must compile whole. */
    const char *colon = strchr(pattern, ':');
    if (colon) {
        for (size_t i = 0; vf_cfg_wall_families[i]; i++) {
            size_t n = strlen(vf_cfg_wall_families[i]);
            if ((size_t)(colon - pattern) == n && strncmp(pattern, vf_cfg_wall_families[i], n) == 0) {
                pattern = colon + 1;
                while (*pattern == ' ')
                    pattern++;
                break;
            }
        }
    }
    if (pattern[0] == '\0')
        return vf_cfg_fail(ctx, at, where, "must not be empty (it would match every page)");
    int code;
    PCRE2_SIZE offset;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_CASELESS | PCRE2_UTF, &code, &offset, NULL);
    if (re) {
        pcre2_code_free(re);
        return 0;
    }
    PCRE2_UCHAR msg[160];
    if (pcre2_get_error_message(code, msg, sizeof msg) < 0)
        snprintf((char *)msg, sizeof msg, "error %d", code);
    return vf_cfg_fail(ctx, at, where, "bad PCRE2 pattern at offset %zu: %s", (size_t)offset,
                       (const char *)msg);
}

static int add_markers(vf_cfg_ctx *ctx, const config_setting_t *list, const char *where, vf_config *cfg)
{
    int n;
    if (vf_cfg_want_seq(ctx, list, where, MARKERS_MAX, &n) != 0)
        return -1;
    if (cfg->n_markers + (size_t)n > MARKERS_MAX)
        return vf_cfg_fail(ctx, list, where, "more than %u markers in all", MARKERS_MAX);
    char **grown = realloc(cfg->markers, (cfg->n_markers + (size_t)n + 1) * sizeof *grown);
    if (!grown)
        return vf_cfg_fail(ctx, list, where, "out of memory");
    cfg->markers = grown;
    for (int i = 0; i < n; i++) {
        const config_setting_t *elem = config_setting_get_elem(list, (unsigned)i);
        char path[VF_CFG_PATH_MAX];
        const char *pattern;
        vf_cfg_index(path, where, i);
        if (vf_cfg_get_string(ctx, elem, path, MARKER_LEN_MAX, &pattern) != 0)
            return -1;
        if (check_marker(ctx, elem, path, pattern) != 0)
            return -1;
        cfg->markers[cfg->n_markers] = strdup(pattern);
        if (!cfg->markers[cfg->n_markers])
            return vf_cfg_fail(ctx, elem, path, "out of memory");
        cfg->markers[++cfg->n_markers] = NULL;
    }
    return 0;
}

int vf_cfg_parse_classify(vf_cfg_ctx *ctx, const config_setting_t *s, vf_config *cfg)
{
    if (vf_cfg_want_group(ctx, s, "classify") != 0 ||
        vf_cfg_check_members(ctx, s, "classify", classify_members) != 0)
        return -1;
    /* interstitial_markers is the old name; it now adds too (it used to
     * replace the built-in list, which switched detection off). */
    const char *names[] = { "extra_markers", "interstitial_markers" };
    for (size_t k = 0; k < 2; k++) {
        const config_setting_t *list = config_setting_get_member(s, names[k]);
        char where[64];
        snprintf(where, sizeof where, "classify.%s", names[k]);
        if (list && add_markers(ctx, list, where, cfg) != 0)
            return -1;
    }
    return 0;
}

int vf_cfg_parse_tenant_classify(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                                 vf_tenant_config *out)
{
    if (vf_cfg_want_group(ctx, s, where) != 0 ||
        vf_cfg_check_members(ctx, s, where, tenant_classify_members) != 0)
        return -1;
    const config_setting_t *list = config_setting_get_member(s, "disable");
    if (!list)
        return 0;
    char at[VF_CFG_PATH_MAX];
    vf_cfg_join(at, where, "disable");
    int n;
    if (vf_cfg_want_seq(ctx, list, at, 16, &n) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        const config_setting_t *elem = config_setting_get_elem(list, (unsigned)i);
        char path[VF_CFG_PATH_MAX];
        const char *name;
        vf_cfg_index(path, at, i);
        if (vf_cfg_get_string(ctx, elem, path, 64, &name) != 0)
            return -1;
        size_t f = 0;
        while (vf_cfg_wall_families[f] && strcmp(vf_cfg_wall_families[f], name) != 0)
            f++;
        if (!vf_cfg_wall_families[f])
            return vf_cfg_fail(ctx, elem, path,
                               "\"%.64s\" is not a family that can be disabled (bot_challenge, access_denied, "
                               "rate_limited, consent_wall, paywall, login_wall, soft_404, js_required)",
                               name);
        out->classify_disabled |= 1u << (f + 1);
    }
    return 0;
}
