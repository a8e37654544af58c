/* One entry of tenants[].providers: "direct" or a keyed "http_api". */
#include "policy/config_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HEADER_NAME_MAX VF_CFG_HEADER_NAME_MAX
#define QUERY_NAME_MAX  64u
#define FORMAT_MAX      256u
#define ENV_NAME_MAX    128u

static const char *const provider_members[] = {
    "name", "kind", "cost", "endpoint", "method", "body", "headers", "credential", "response",
    "quota", NULL,
};
static const char *const credential_members[] = {
    "header", "query", "basic", "format", "key_file", "key_env", NULL,
};
static const char *const response_members[] = { "mode", "pointer", "title", "content", "encoding", NULL };

static size_t count_occurrences(const char *haystack, const char *needle)
{
    size_t n = 0, step = strlen(needle);
    for (const char *p = strstr(haystack, needle); p; p = strstr(p + step, needle))
        n++;
    return n;
}

/* NULL when the endpoint template is acceptable, else why not. */
static const char *endpoint_problem(const char *url)
{
    size_t scheme;
    if (strncmp(url, "https://", 8) == 0)
        scheme = 8;
    else if (strncmp(url, "http://", 7) == 0)
        scheme = 7;
    else
        return "must be an http:// or https:// URL";
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
            return "must not contain spaces, control characters or non-ASCII bytes";
    const char *host = url + scheme;
    size_t authority = strcspn(host, "/?#");
    if (authority == 0)
        return "has no host";
    if (memchr(host, '@', authority))
        return "must not carry user:password@ (use credential)";
    /* The target must never pick the host the broker connects to. */
    const char *first_url = strstr(url, "{url}");
    if (first_url && first_url < host + authority)
        return "{url} must be in the path or query, not the host";
    if (count_occurrences(url, "{url}") > 1)
        return "must contain {url} only once";
    return NULL;
}

static bool valid_header_name(const char *name)
{
    static const char *const reserved[] = {
        "host", "content-length", "transfer-encoding", "connection", NULL,
    };
    if (!vf_cfg_header_token(name))
        return false;
    for (size_t i = 0; reserved[i]; i++)
        if (strcasecmp(name, reserved[i]) == 0)
            return false;
    return true;
}

/* RFC 3986 unreserved characters only: the name goes into the URL as is. */
static bool valid_query_name(const char *name)
{
    return vf_cfg_name_of(name, QUERY_NAME_MAX, "-._~");
}

static bool valid_env_name(const char *name)
{
    return !isdigit((unsigned char)name[0]) && vf_cfg_name_of(name, ENV_NAME_MAX, "_");
}

/* RFC 6901, restricted to absolute pointers: "/a/b~1c", every '~' escaped. */
static bool valid_pointer(const char *p)
{
    if (p[0] != '/')
        return false;
    for (size_t i = 0; p[i]; i++)
        if (p[i] == '~' && p[i + 1] != '0' && p[i + 1] != '1')
            return false;
    return true;
}

static int dup_into(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                    const char *value, char **out)
{
    *out = strdup(value);
    return *out ? 0 : vf_cfg_fail(ctx, s, where, "out of memory");
}

/* Optional string member: 1 when present (and *value set), 0 when absent, -1 on error. */
static int member_string(vf_cfg_ctx *ctx, const config_setting_t *group, const char *where,
                         const char *name, size_t max_len, const config_setting_t **at,
                         const char **value)
{
    char path[VF_CFG_PATH_MAX];
    vf_cfg_join(path, where, name);
    *at = config_setting_get_member(group, name);
    if (!*at)
        return 0;
    return vf_cfg_get_string(ctx, *at, path, max_len, value) == 0 ? 1 : -1;
}

/* NULL when credential.basic is a usable "user:password" template, else why not. */
static const char *basic_problem(const char *basic)
{
    for (const char *p = basic; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            return "must be printable ASCII";
    if (count_occurrences(basic, "{key}") != 1)
        return "must contain {key} exactly once";
    if (!strchr(basic, ':'))
        return "must read \"user:password\" (\"{key}:\" sends the key as the user name, empty password)";
    return NULL;
}

static int parse_credential(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                            vf_provider_config *out)
{
    if (vf_cfg_want_group(ctx, s, where) != 0 ||
        vf_cfg_check_members(ctx, s, where, credential_members) != 0)
        return -1;
    char path[VF_CFG_PATH_MAX];
    const config_setting_t *header_at, *query_at, *format_at, *file_at, *env_at;
    const char *header = NULL, *query = NULL, *format = "{key}", *file = NULL, *env = NULL;
    int has_header = member_string(ctx, s, where, "header", HEADER_NAME_MAX + 1, &header_at, &header);
    if (has_header < 0)
        return -1;
    int has_query = member_string(ctx, s, where, "query", QUERY_NAME_MAX + 1, &query_at, &query);
    if (has_query < 0)
        return -1;
    int has_format = member_string(ctx, s, where, "format", FORMAT_MAX, &format_at, &format);
    if (has_format < 0)
        return -1;
    int has_file = member_string(ctx, s, where, "key_file", VF_CFG_STRING_MAX, &file_at, &file);
    if (has_file < 0)
        return -1;
    int has_env = member_string(ctx, s, where, "key_env", ENV_NAME_MAX + 1, &env_at, &env);
    if (has_env < 0)
        return -1;
    const config_setting_t *basic_at;
    const char *basic = NULL;
    int has_basic = member_string(ctx, s, where, "basic", FORMAT_MAX, &basic_at, &basic);
    if (has_basic < 0)
        return -1;

    if (has_header + has_query + has_basic != 1)
        return vf_cfg_fail(ctx, s, where, "set exactly one of header, query or basic");
    if (has_basic && has_format) {
        vf_cfg_join(path, where, "format");
        return vf_cfg_fail(ctx, format_at, path, "only valid with header (basic is its own format)");
    }
    if (has_basic) {
        vf_cfg_join(path, where, "basic");
        const char *why_not = basic_problem(basic);
        if (why_not)
            return vf_cfg_fail(ctx, basic_at, path, "%s", why_not);
    }
    if (has_file + has_env != 1)
        return vf_cfg_fail(ctx, s, where, "set exactly one of key_file or key_env");
    if (has_header && !valid_header_name(header)) {
        vf_cfg_join(path, where, "header");
        return vf_cfg_fail(ctx, header_at, path,
                           "\"%s\" is not a usable HTTP header name (a token of at most %u "
                           "characters; not Host, Content-Length, Transfer-Encoding or Connection)",
                           header, HEADER_NAME_MAX);
    }
    if (has_query && !valid_query_name(query)) {
        vf_cfg_join(path, where, "query");
        return vf_cfg_fail(ctx, query_at, path,
                           "\"%s\" must be 1-%u characters of A-Z, a-z, 0-9, '-', '.', '_', '~'",
                           query, QUERY_NAME_MAX);
    }
    if (has_format) {
        vf_cfg_join(path, where, "format");
        for (const char *p = format; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
                return vf_cfg_fail(ctx, format_at, path, "must not contain control characters");
        if (count_occurrences(format, "{key}") != 1)
            return vf_cfg_fail(ctx, format_at, path, "must contain {key} exactly once");
    }

    char why[VF_CFG_STRING_MAX + 256];
    char origin[VF_CFG_STRING_MAX + 8];
    if (has_file) {
        vf_cfg_join(path, where, "key_file");
        if (file[0] != '/')
            return vf_cfg_fail(ctx, file_at, path, "must be an absolute path");
        if (vf_cfg_key_from_file(file, &out->secret, why, sizeof why) != 0)
            return vf_cfg_fail(ctx, file_at, path, "%s", why);
        snprintf(origin, sizeof origin, "file %s", file);
    } else {
        vf_cfg_join(path, where, "key_env");
        if (!valid_env_name(env))
            return vf_cfg_fail(ctx, env_at, path,
                               "\"%s\" is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)",
                               env);
        if (vf_cfg_key_from_env(env, &out->secret, why, sizeof why) != 0)
            return vf_cfg_fail(ctx, env_at, path, "%s", why);
        snprintf(origin, sizeof origin, "env %s", env);
    }
    if (dup_into(ctx, s, where, origin, &out->key_origin) != 0 ||
        dup_into(ctx, s, where, format, &out->cred_format) != 0)
        return -1;
    if (has_header && dup_into(ctx, s, where, header, &out->cred_header) != 0)
        return -1;
    if (has_query && dup_into(ctx, s, where, query, &out->cred_query) != 0)
        return -1;
    if (has_basic) {
        const char *at = strstr(basic, "{key}");
        if (asprintf(&out->basic_pair, "%.*s%s%s", (int)(at - basic), basic, out->secret, at + 5) < 0) {
            out->basic_pair = NULL;
            return vf_cfg_fail(ctx, s, where, "out of memory");
        }
    }
    return 0;
}

/* response.content ("text" | "html") and response.encoding ("none" |
 * "base64"): what the string the pointer finds holds. 1 when either is
 * set (*at the last one), 0 when neither, -1 on error. */
static int parse_field(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where, uint32_t *field,
                       const config_setting_t **at)
{
    static const struct {
        const char *member, *plain, *special;
        uint32_t bit;
    } parts[] = { { "content", "text", "html", VF_FIELD_HTML }, { "encoding", "none", "base64", VF_FIELD_BASE64 } };
    int any = 0;
    *field = 0;
    for (size_t i = 0; i < 2; i++) {
        char path[VF_CFG_PATH_MAX];
        const config_setting_t *here;
        const char *v;
        int has = member_string(ctx, s, where, parts[i].member, VF_CFG_STRING_MAX, &here, &v);
        if (has < 0)
            return -1;
        if (!has)
            continue;
        any = 1;
        *at = here;
        if (strcmp(v, parts[i].special) == 0)
            *field |= parts[i].bit;
        else if (strcmp(v, parts[i].plain) != 0) {
            vf_cfg_join(path, where, parts[i].member);
            return vf_cfg_fail(ctx, here, path, "must be \"%s\" or \"%s\"", parts[i].plain, parts[i].special);
        }
    }
    return any;
}

static int parse_response(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                          vf_provider_config *out)
{
    if (vf_cfg_want_group(ctx, s, where) != 0 ||
        vf_cfg_check_members(ctx, s, where, response_members) != 0)
        return -1;
    char path[VF_CFG_PATH_MAX];
    const config_setting_t *mode_at, *pointer_at, *title_at;
    const char *mode = "raw", *pointer = NULL, *title = NULL;
    if (member_string(ctx, s, where, "mode", VF_CFG_STRING_MAX, &mode_at, &mode) < 0)
        return -1;
    int has_pointer = member_string(ctx, s, where, "pointer", VF_IPC_MAX_POINTER, &pointer_at,
                                    &pointer);
    int has_title = member_string(ctx, s, where, "title", VF_IPC_MAX_POINTER, &title_at, &title);
    if (has_pointer < 0 || has_title < 0)
        return -1;
    const config_setting_t *field_at = NULL;
    int has_field = parse_field(ctx, s, where, &out->json_field, &field_at);
    if (has_field < 0)
        return -1;
    if (strcmp(mode, "raw") == 0) {
        out->mode = VF_MODE_RAW;
        if (has_pointer || has_title || has_field) {
            const char *name = has_pointer ? "pointer" : has_title ? "title" : config_setting_name(field_at);
            vf_cfg_join(path, where, name);
            return vf_cfg_fail(ctx, has_pointer ? pointer_at : has_title ? title_at : field_at, path,
                               "only valid with mode \"json\"");
        }
        return 0;
    }
    if (has_title && (out->json_field & VF_FIELD_HTML)) {
        vf_cfg_join(path, where, "title");
        return vf_cfg_fail(ctx, title_at, path, "not with content \"html\" (the page's own title is used)");
    }
    if (strcmp(mode, "json") != 0) {
        vf_cfg_join(path, where, "mode");
        return vf_cfg_fail(ctx, mode_at, path, "must be \"raw\" or \"json\"");
    }
    out->mode = VF_MODE_JSON;
    vf_cfg_join(path, where, "pointer");
    if (!has_pointer)
        return vf_cfg_fail(ctx, s, path, "missing (required with mode \"json\")");
    static const char pointer_rule[] = "must be a JSON pointer starting with \"/\" (~ written as ~0, / as ~1)";
    if (!valid_pointer(pointer))
        return vf_cfg_fail(ctx, pointer_at, path, pointer_rule);
    if (dup_into(ctx, pointer_at, path, pointer, &out->json_pointer) != 0)
        return -1;
    if (!has_title)
        return 0;
    vf_cfg_join(path, where, "title");
    if (!valid_pointer(title))
        return vf_cfg_fail(ctx, title_at, path, pointer_rule);
    return dup_into(ctx, title_at, path, title, &out->title_pointer);
}

int vf_cfg_parse_provider(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                          vf_provider_config *out)
{
    memset(out, 0, sizeof *out);
    out->mode = VF_MODE_RAW;
    if (vf_cfg_check_members(ctx, s, where, provider_members) != 0)
        return -1;

    char path[VF_CFG_PATH_MAX];
    const config_setting_t *at;
    const char *name, *kind;
    int found = member_string(ctx, s, where, "name", VF_CFG_STRING_MAX, &at, &name);
    vf_cfg_join(path, where, "name");
    if (found < 0)
        return -1;
    if (found == 0)
        return vf_cfg_fail(ctx, s, path, "missing (every provider needs a name)");
    if (!vf_cfg_valid_name(name))
        return vf_cfg_fail(ctx, at, path, "\"%.64s\" must be 1-32 characters of a-z, 0-9, '_', '-'",
                           name);
    if (dup_into(ctx, at, path, name, &out->name) != 0)
        return -1;

    found = member_string(ctx, s, where, "kind", VF_CFG_STRING_MAX, &at, &kind);
    vf_cfg_join(path, where, "kind");
    if (found < 0)
        return -1;
    if (found == 0)
        return vf_cfg_fail(ctx, s, path, "missing (must be \"direct\" or \"http_api\")");
    if (strcmp(kind, "direct") == 0)
        out->kind = VF_PROVIDER_DIRECT;
    else if (strcmp(kind, "http_api") == 0)
        out->kind = VF_PROVIDER_HTTP_API;
    else
        return vf_cfg_fail(ctx, at, path, "must be \"direct\" or \"http_api\"");

    at = config_setting_get_member(s, "cost");
    vf_cfg_join(path, where, "cost");
    if (at && vf_cfg_get_number(ctx, at, path, 0.0, VF_CFG_COST_MAX, &out->cost_per_call) != 0)
        return -1;
    vf_cfg_join(path, where, "quota");
    if ((at = config_setting_get_member(s, "quota")) && vf_cfg_parse_provider_quota(ctx, at, path, &out->quota) != 0)
        return -1;

    static const char *const api_only[] = { "endpoint", "method", "body", "headers", "credential",
                                            "response", NULL };
    if (out->kind == VF_PROVIDER_DIRECT) {
        for (size_t i = 0; api_only[i]; i++) {
            at = config_setting_get_member(s, api_only[i]);
            vf_cfg_join(path, where, api_only[i]);
            if (at)
                return vf_cfg_fail(ctx, at, path, "only valid for kind \"http_api\"");
        }
        return 0;
    }

    const char *endpoint;
    found = member_string(ctx, s, where, "endpoint", VF_CFG_STRING_MAX, &at, &endpoint);
    vf_cfg_join(path, where, "endpoint");
    if (found < 0)
        return -1;
    if (found == 0)
        return vf_cfg_fail(ctx, s, path, "missing (required for kind \"http_api\")");
    const char *problem = endpoint_problem(endpoint);
    if (problem)
        return vf_cfg_fail(ctx, at, path, "%s", problem);
    if (dup_into(ctx, at, path, endpoint, &out->endpoint) != 0)
        return -1;

    at = config_setting_get_member(s, "credential");
    vf_cfg_join(path, where, "credential");
    if (!at)
        return vf_cfg_fail(ctx, s, path, "missing (required for kind \"http_api\")");
    if (parse_credential(ctx, at, path, out) != 0)
        return -1;
    if (vf_cfg_parse_provider_request(ctx, s, where, out) != 0)
        return -1;

    at = config_setting_get_member(s, "response");
    vf_cfg_join(path, where, "response");
    return at ? parse_response(ctx, at, path, out) : 0;
}

void vf_cfg_provider_free(vf_provider_config *p)
{
    if (!p)
        return;
    free(p->name);
    free(p->endpoint);
    free(p->cred_header);
    free(p->cred_format);
    free(p->cred_query);
    vf_cfg_wipe_free(p->basic_pair);
    free(p->key_origin);
    vf_cfg_wipe_free(p->secret);
    free(p->json_pointer);
    free(p->title_pointer);
    vf_cfg_provider_request_free(p);
    memset(p, 0, sizeof *p);
}
