/* The request side of an http_api provider beyond its endpoint: method,
 * a JSON body template (policy/provider_body.h) and extra static headers.
 * Everything here is fixed at load: the target URL can only ever become one
 * JSON string value of the body, never a header, a member or the endpoint. */
#include "policy/config_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/provider_body.h"

bool vf_cfg_header_token(const char *name)
{
    return vf_cfg_name_of(name, VF_CFG_HEADER_NAME_MAX, "!#$%&'*+-.^_`|~");
}

#define BODY_MAX          (64u * 1024u)
#define HEADER_LINE_MAX   1024u
#define HEADERS_MAX       16u

/* Headers the proxy writes itself, or that would undo its guarantees: the
 * coding must stay identity for the mask, the framing is ours, and a key
 * belongs in credential (a file or the environment), never in the config. */
static const char *const reserved_headers[] = {
    "host", "content-length", "transfer-encoding", "connection", "content-type",
    "accept-encoding", "te", "upgrade", "expect", "authorization", "proxy-authorization",
    "cookie", "user-agent", NULL,
};

static json_t *to_json(const config_setting_t *s, int depth, const char **why);

static json_t *seq_to_json(const config_setting_t *s, int depth, const char **why)
{
    json_t *arr = json_array();
    for (int i = 0; arr && i < config_setting_length(s); i++) {
        json_t *v = to_json(config_setting_get_elem(s, (unsigned)i), depth + 1, why);
        if (!v || json_array_append_new(arr, v) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static json_t *group_to_json(const config_setting_t *s, int depth, const char **why)
{
    json_t *obj = json_object();
    for (int i = 0; obj && i < config_setting_length(s); i++) {
        const config_setting_t *m = config_setting_get_elem(s, (unsigned)i);
        json_t *v = to_json(m, depth + 1, why);
        if (!v || json_object_set_new(obj, config_setting_name(m), v) != 0) {
            json_decref(obj);
            return NULL;
        }
    }
    return obj;
}

/* A libconfig value as JSON, types kept: groups are objects, arrays and lists
 * are arrays. *why says what went wrong when NULL comes back. */
static json_t *to_json(const config_setting_t *s, int depth, const char **why)
{
    if (depth > VF_BODY_MAX_DEPTH) {
        *why = "nests too deeply";
        return NULL;
    }
    json_t *v = NULL;
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_GROUP: v = group_to_json(s, depth, why); break;
    case CONFIG_TYPE_ARRAY:
    case CONFIG_TYPE_LIST: v = seq_to_json(s, depth, why); break;
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: v = json_integer((json_int_t)config_setting_get_int64(s)); break;
    case CONFIG_TYPE_FLOAT: v = json_real(config_setting_get_float(s)); break;
    case CONFIG_TYPE_BOOL: v = json_boolean(config_setting_get_bool(s)); break;
    case CONFIG_TYPE_STRING:
        v = json_string(config_setting_get_string(s));
        if (!v && !*why)
            *why = "holds a string that is not UTF-8";
        break;
    default: break;
    }
    if (!v && !*why)
        *why = "holds a value JSON cannot carry";
    return v;
}

/* body: a group (its members become the JSON object) or a string of JSON text
 * whose top level is an object. Stored compact in out->body_template. */
static int parse_body(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                      vf_provider_config *out)
{
    json_t *root = NULL;
    const char *why = NULL;
    if (config_setting_type(s) == CONFIG_TYPE_GROUP) {
        root = to_json(s, 0, &why);
    } else {
        const char *text;
        if (vf_cfg_get_string(ctx, s, where, BODY_MAX, &text) != 0)
            return -1;
        json_error_t jerr;
        root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
            return vf_cfg_fail(ctx, s, where, "is not JSON: %s (column %d)", jerr.text, jerr.column);
        if (!json_is_object(root))
            why = "must be a JSON object";
    }
    if (!root || why) {
        json_decref(root);
        return vf_cfg_fail(ctx, s, where, "%s", why ? why : "out of memory");
    }
    out->body_template = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!out->body_template)
        return vf_cfg_fail(ctx, s, where, "out of memory");
    if (strlen(out->body_template) > BODY_MAX)
        return vf_cfg_fail(ctx, s, where, "is longer than %u bytes as JSON", BODY_MAX);
    int misplaced = 0;
    if (vf_body_count_url(out->body_template, &misplaced) < 0)
        return vf_cfg_fail(ctx, s, where, "nests too deeply");
    if (misplaced)
        return vf_cfg_fail(ctx, s, where,
                           "{timeout_ms} and {timeout_s} must be a whole string value (they become numbers)");
    return 0;
}

/* One "Name: value" entry of headers. */
static int parse_header(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                        const vf_provider_config *pc, char **out)
{
    const char *line;
    if (vf_cfg_get_string(ctx, s, where, HEADER_LINE_MAX, &line) != 0)
        return -1;
    const char *colon = strchr(line, ':');
    char name[HEADER_LINE_MAX + 1];
    size_t nl = colon ? (size_t)(colon - line) : 0;
    memcpy(name, line, nl);
    name[nl] = '\0';
    if (!colon || !vf_cfg_header_token(name))
        return vf_cfg_fail(ctx, s, where, "must read \"Name: value\" with a header name token");
    for (size_t i = 0; reserved_headers[i]; i++)
        if (strcasecmp(name, reserved_headers[i]) == 0)
            return vf_cfg_fail(ctx, s, where,
                               "%s is set by the credential proxy and cannot be configured", name);
    if (pc->cred_header && strcasecmp(name, pc->cred_header) == 0)
        return vf_cfg_fail(ctx, s, where, "%s carries the key (credential.header)", name);
    const char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    for (const char *p = v; *p; p++)
        if (((unsigned char)*p < 0x20 && *p != '\t') || (unsigned char)*p >= 0x7f)
            return vf_cfg_fail(ctx, s, where, "value must be printable ASCII");
    if (asprintf(out, "%s: %s", name, v) < 0) {
        *out = NULL;
        return vf_cfg_fail(ctx, s, where, "out of memory");
    }
    return 0;
}

static int parse_headers(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                         vf_provider_config *out)
{
    int n;
    if (vf_cfg_want_seq(ctx, s, where, HEADERS_MAX, &n) != 0)
        return -1;
    out->headers = calloc((size_t)n + 1, sizeof *out->headers);
    if (!out->headers)
        return vf_cfg_fail(ctx, s, where, "out of memory");
    char path[VF_CFG_PATH_MAX];
    for (int i = 0; i < n; i++) {
        vf_cfg_index(path, where, i);
        if (parse_header(ctx, config_setting_get_elem(s, (unsigned)i), path, out, &out->headers[i]) != 0)
            return -1;
        out->n_headers++;
    }
    return 0;
}

int vf_cfg_parse_provider_request(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                                  vf_provider_config *out)
{
    char path[VF_CFG_PATH_MAX];
    const config_setting_t *method_at = config_setting_get_member(s, "method");
    const config_setting_t *body_at = config_setting_get_member(s, "body");
    const config_setting_t *headers_at = config_setting_get_member(s, "headers");
    if (method_at) {
        const char *method;
        vf_cfg_join(path, where, "method");
        if (vf_cfg_get_string(ctx, method_at, path, 8, &method) != 0)
            return -1;
        if (strcmp(method, "POST") == 0)
            out->post = true;
        else if (strcmp(method, "GET") != 0)
            return vf_cfg_fail(ctx, method_at, path, "must be \"GET\" or \"POST\"");
    }
    vf_cfg_join(path, where, "body");
    if (body_at && !out->post)
        return vf_cfg_fail(ctx, body_at, path, "only valid with method \"POST\"");
    if (out->post && !body_at)
        return vf_cfg_fail(ctx, s, path, "missing (required with method \"POST\")");
    if (body_at && parse_body(ctx, body_at, path, out) != 0)
        return -1;
    vf_cfg_join(path, where, "headers");
    if (headers_at && parse_headers(ctx, headers_at, path, out) != 0)
        return -1;

    /* The target has to reach the provider somewhere, and only once in the URL. */
    int misplaced = 0;
    int in_body = out->body_template ? vf_body_count_url(out->body_template, &misplaced) : 0;
    const char *u = strstr(out->endpoint, "{url}");
    int in_endpoint = u ? 1 : 0;
    const config_setting_t *endpoint_at = config_setting_get_member(s, "endpoint");
    vf_cfg_join(path, where, "endpoint");
    if (!out->post && in_endpoint != 1)
        return vf_cfg_fail(ctx, endpoint_at, path, "must contain exactly one {url}");
    if (out->post && in_endpoint + in_body < 1)
        return vf_cfg_fail(ctx, endpoint_at, path, "neither endpoint nor body contains {url}");
    return 0;
}

void vf_cfg_provider_request_free(vf_provider_config *p)
{
    free(p->body_template);
    for (size_t i = 0; p->headers && i < p->n_headers; i++)
        free(p->headers[i]);
    free(p->headers);
}
