/* Error formatting and strictly typed getters over libconfig settings. */
#include "policy/config_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vformat(vf_cfg_ctx *ctx, const char *prefix, const char *fmt, va_list ap)
{
    if (!ctx->err || ctx->errlen == 0)
        return;
    int used = snprintf(ctx->err, ctx->errlen, "%s", prefix);
    if (used < 0 || (size_t)used >= ctx->errlen)
        return;
    vsnprintf(ctx->err + used, ctx->errlen - (size_t)used, fmt, ap);
}

int vf_cfg_fail(vf_cfg_ctx *ctx, const config_setting_t *at, const char *where,
                const char *fmt, ...)
{
    const char *file = at ? config_setting_source_file(at) : NULL;
    unsigned line = at ? config_setting_source_line(at) : 0;
    char prefix[VF_CFG_PATH_MAX + 512];
    if (!file)
        file = ctx->path;
    if (line > 0)
        snprintf(prefix, sizeof prefix, "%s:%u: %s: ", file, line, where);
    else
        snprintf(prefix, sizeof prefix, "%s: %s: ", file, where);
    va_list ap;
    va_start(ap, fmt);
    vformat(ctx, prefix, fmt, ap);
    va_end(ap);
    return -1;
}

int vf_cfg_fail_plain(vf_cfg_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vformat(ctx, "", fmt, ap);
    va_end(ap);
    return -1;
}

void vf_cfg_join(char *out, const char *parent, const char *member)
{
    if (parent && parent[0])
        snprintf(out, VF_CFG_PATH_MAX, "%s.%s", parent, member);
    else
        snprintf(out, VF_CFG_PATH_MAX, "%s", member);
}

void vf_cfg_index(char *out, const char *parent, int index)
{
    snprintf(out, VF_CFG_PATH_MAX, "%s[%d]", parent, index);
}

static const char *type_name(int type)
{
    switch (type) {
    case CONFIG_TYPE_GROUP: return "a group { ... }";
    case CONFIG_TYPE_INT: return "an integer";
    case CONFIG_TYPE_INT64: return "a 64-bit integer";
    case CONFIG_TYPE_FLOAT: return "a float";
    case CONFIG_TYPE_STRING: return "a string";
    case CONFIG_TYPE_BOOL: return "a boolean";
    case CONFIG_TYPE_ARRAY: return "an array [ ... ]";
    case CONFIG_TYPE_LIST: return "a list ( ... )";
    default: return "an unknown type";
    }
}

static int wrong_type(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                      const char *wanted)
{
    return vf_cfg_fail(ctx, s, where, "must be %s, not %s", wanted,
                       type_name(config_setting_type(s)));
}

int vf_cfg_check_members(vf_cfg_ctx *ctx, const config_setting_t *group, const char *where,
                         const char *const *allowed)
{
    int n = config_setting_length(group);
    for (int i = 0; i < n; i++) {
        const config_setting_t *member = config_setting_get_elem(group, (unsigned)i);
        const char *name = config_setting_name(member);
        bool known = false;
        for (size_t k = 0; name && allowed[k]; k++)
            if (strcmp(allowed[k], name) == 0)
                known = true;
        if (known)
            continue;
        char expected[512] = "";
        size_t used = 0;
        for (size_t k = 0; allowed[k] && used < sizeof expected; k++) {
            int w = snprintf(expected + used, sizeof expected - used, "%s%s", k ? ", " : "",
                             allowed[k]);
            if (w < 0)
                break;
            used += (size_t)w;
        }
        char path[VF_CFG_PATH_MAX];
        vf_cfg_join(path, where, name ? name : "?");
        return vf_cfg_fail(ctx, member, path, "unknown setting (expected one of: %s)", expected);
    }
    return 0;
}

int vf_cfg_want_group(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where)
{
    if (config_setting_type(s) != CONFIG_TYPE_GROUP)
        return wrong_type(ctx, s, where, "a group { ... }");
    return 0;
}

int vf_cfg_want_seq(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                    unsigned max, int *count)
{
    int type = config_setting_type(s);
    if (type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST)
        return wrong_type(ctx, s, where, "an array [ ... ] or list ( ... )");
    int n = config_setting_length(s);
    if (n < 0 || (unsigned)n > max)
        return vf_cfg_fail(ctx, s, where, "has %d entries; at most %u allowed", n, max);
    *count = n;
    return 0;
}

int vf_cfg_get_string(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                      size_t max_len, const char **out)
{
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return wrong_type(ctx, s, where, "a string");
    const char *v = config_setting_get_string(s);
    if (!v)
        return vf_cfg_fail(ctx, s, where, "unreadable string");
    size_t n = strlen(v);
    if (n > max_len)
        return vf_cfg_fail(ctx, s, where, "is %zu bytes long; at most %zu allowed", n, max_len);
    *out = v;
    return 0;
}

int vf_cfg_get_int(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                   long long min, long long max, long long *out)
{
    int type = config_setting_type(s);
    if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
        return wrong_type(ctx, s, where, "an integer");
    long long v = config_setting_get_int64(s);
    if (v < min || v > max)
        return vf_cfg_fail(ctx, s, where, "%lld is out of range (%lld..%lld)", v, min, max);
    *out = v;
    return 0;
}

int vf_cfg_get_bool(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where, bool *out)
{
    if (config_setting_type(s) != CONFIG_TYPE_BOOL)
        return wrong_type(ctx, s, where, "a boolean (true or false)");
    *out = config_setting_get_bool(s) != 0;
    return 0;
}

int vf_cfg_get_number(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                      double min, double max, double *out)
{
    int type = config_setting_type(s);
    double v;
    if (type == CONFIG_TYPE_FLOAT)
        v = config_setting_get_float(s);
    else if (type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64)
        v = (double)config_setting_get_int64(s);
    else
        return wrong_type(ctx, s, where, "a number");
    if (!isfinite(v) || v < min || v > max)
        return vf_cfg_fail(ctx, s, where, "%g is out of range (%g..%g)", v, min, max);
    *out = v;
    return 0;
}

/* Follows "a.b[2].c" down from `at` as far as the file goes; *complete says
 * whether every step was found. */
static const config_setting_t *walk_path(const config_setting_t *at, const char *path,
                                         bool *complete)
{
    *complete = false;
    for (const char *p = path; *p;) {
        const config_setting_t *next = NULL;
        if (*p == '[') {
            char *end;
            unsigned long index = strtoul(p + 1, &end, 10);
            int type = config_setting_type(at);
            if (end == p + 1 || *end != ']' || index > 0xffffu)
                return at;
            if (type == CONFIG_TYPE_ARRAY || type == CONFIG_TYPE_LIST)
                next = config_setting_get_elem(at, (unsigned)index);
            p = end + 1;
        } else {
            if (*p == '.')
                p++;
            size_t n = strcspn(p, ".[");
            char name[VF_CFG_PATH_MAX];
            if (n == 0 || n >= sizeof name)
                return at;
            memcpy(name, p, n);
            name[n] = '\0';
            if (config_setting_type(at) == CONFIG_TYPE_GROUP)
                next = config_setting_get_member(at, name);
            p += n;
        }
        if (!next)
            return at;
        at = next;
    }
    *complete = true;
    return at;
}

/* "failure_threshold/failure_rate..." -> the first alternative `group` sets,
 * with the rest of the path kept; unchanged when it sets none. */
static void pick_alternative(const config_setting_t *group, char *rel)
{
    size_t head = strcspn(rel, ".[");
    if (!memchr(rel, '/', head))
        return;
    for (size_t start = 0; start < head;) {
        size_t n = strcspn(rel + start, "/.[");
        char name[VF_CFG_PATH_MAX];
        memcpy(name, rel + start, n);
        name[n] = '\0';
        if (n > 0 && config_setting_get_member(group, name)) {
            memmove(rel, rel + start, n);
            memmove(rel + n, rel + head, strlen(rel + head) + 1);
            return;
        }
        start += n + 1;
    }
}

int vf_cfg_fail_relative(vf_cfg_ctx *ctx, const config_setting_t *group, const char *where,
                         const char *message, const char *if_unset)
{
    const char *colon = strstr(message, ": ");
    char rel[VF_CFG_PATH_MAX], walk[VF_CFG_PATH_MAX];
    if (!colon || (size_t)(colon - message) >= sizeof rel)
        return vf_cfg_fail(ctx, group, where, "%s", message);
    memcpy(rel, message, (size_t)(colon - message));
    rel[colon - message] = '\0';
    /* The message keeps the validator's path; the line comes from what the file sets. */
    memcpy(walk, rel, strlen(rel) + 1);
    pick_alternative(group, walk);

    bool complete;
    const config_setting_t *at = walk_path(group, walk, &complete);
    char path[VF_CFG_PATH_MAX];
    vf_cfg_join(path, where, rel);
    return vf_cfg_fail(ctx, at, path, "%s%s", colon + 2, complete ? "" : if_unset);
}

bool vf_cfg_valid_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 32)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    }
    return true;
}

bool vf_cfg_name_of(const char *name, size_t max, const char *also)
{
    size_t n = strlen(name);
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr(also, name[i]))
            return false;
    return true;
}
