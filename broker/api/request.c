#include "broker/api/request.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "broker/judge/safe_text.h"
#include "broker/lookup/url_ascii.h"
#include "ipc/ipc_messages.h"

static int fail(vf_request_error *err, const char *field, const char *msg)
{
    snprintf(err->field, sizeof err->field, "%s", field);
    snprintf(err->message, sizeof err->message, "%s", msg);
    return -1;
}

/* Only absolute http(s) URLs with a host; everything else is refused up front
 * so a model cannot aim the fetcher at file://, gopher:// and friends. */
static int check_url(const char *url, size_t len, vf_request_error *err)
{
    if (len == 0)
        return fail(err, "url", "must not be empty");
    if (len > VF_IPC_MAX_URL)
        return fail(err, "url", "is longer than 8192 bytes");
    if (strlen(url) != len)
        return fail(err, "url", "must not contain NUL bytes");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)url[i];
        if (c <= 0x20 || c == 0x7f)
            return fail(err, "url", "must not contain spaces or control characters");
    }
    size_t scheme_len;
    if (strncasecmp(url, "http://", 7) == 0)
        scheme_len = 7;
    else if (strncasecmp(url, "https://", 8) == 0)
        scheme_len = 8;
    else
        return fail(err, "url", "must be an absolute http:// or https:// URL");
    const char *host = url + scheme_len;
    if (*host == '\0' || *host == '/' || *host == '?' || *host == '#')
        return fail(err, "url", "has no host");
    return 0;
}

static int take_url(json_t *v, vf_lookup_request *out, vf_request_error *err)
{
    if (!json_is_string(v))
        return fail(err, "url", "must be a string");
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (check_url(s, len, err) != 0)
        return -1;
    const char *why = NULL;
    out->url = vf_url_ascii(s, &why); /* the one host spelling every rule and the worker see */
    return out->url ? 0 : fail(err, "url", why);
}

static int take_must_contain(json_t *v, vf_lookup_request *out, vf_request_error *err)
{
    if (json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return fail(err, "must_contain", "must be a string or null");
    size_t len = json_string_length(v);
    if (len == 0)
        return fail(err, "must_contain", "must not be empty");
    if (len > VF_MAX_MUST_CONTAIN)
        return fail(err, "must_contain", "is longer than 1024 bytes");
    if (strlen(json_string_value(v)) != len)
        return fail(err, "must_contain", "must not contain NUL bytes");
    out->must_contain = strdup(json_string_value(v));
    return out->must_contain ? 0 : fail(err, "", "out of memory");
}

static int take_must_contain_mode(json_t *v, vf_lookup_request *out, vf_request_error *err)
{
    const char *mode = json_is_string(v) ? json_string_value(v) : NULL;
    if (mode && strcmp(mode, "exact") == 0)
        out->must_contain_exact = true;
    else if (mode && strcmp(mode, "folded") == 0)
        out->must_contain_exact = false;
    else
        return fail(err, "must_contain_mode", "must be \"folded\" or \"exact\"");
    return 0;
}

static int take_min_chars(json_t *v, vf_lookup_request *out, vf_request_error *err)
{
    if (!json_is_integer(v))
        return fail(err, "min_chars", "must be an integer");
    json_int_t n = json_integer_value(v);
    if (n < 0 || n > VF_MAX_MIN_CHARS)
        return fail(err, "min_chars", "must be between 0 and 1000000");
    out->min_chars = (unsigned)n;
    return 0;
}

static int take_max_attempts(json_t *v, vf_lookup_request *out, vf_request_error *err)
{
    if (!json_is_integer(v))
        return fail(err, "max_attempts", "must be an integer");
    json_int_t n = json_integer_value(v);
    /* Out-of-range values are clamped later (the seed's contract), but keep
     * the number representable. */
    if (n < -1000000 || n > 1000000)
        return fail(err, "max_attempts", "must be between -1000000 and 1000000");
    out->max_attempts = (int)n;
    out->has_max_attempts = true;
    return 0;
}

/* One of a few words, mapped to VF_RENDER_* bits. */
static int take_choice(json_t *v, const char *field, const char *const *words,
                       const uint32_t *bits, vf_lookup_request *out, vf_request_error *err)
{
    char msg[160];
    size_t o = (size_t)snprintf(msg, sizeof msg, "must be one of");
    for (size_t i = 0; words[i]; i++)
        o += (size_t)snprintf(msg + o, sizeof msg - o, "%s \"%s\"", i ? "," : "", words[i]);
    if (!json_is_string(v))
        return fail(err, field, msg);
    for (size_t i = 0; words[i]; i++) {
        if (strcmp(json_string_value(v), words[i]) == 0) {
            out->render |= bits[i];
            return 0;
        }
    }
    return fail(err, field, msg);
}

static int take_count(json_t *v, const char *field, json_int_t min, json_int_t max, size_t *out,
                      vf_request_error *err)
{
    char msg[96];
    snprintf(msg, sizeof msg, "must be an integer between %lld and %lld", (long long)min,
             (long long)max);
    if (!json_is_integer(v))
        return fail(err, field, msg);
    json_int_t n = json_integer_value(v);
    if (n < min || n > max)
        return fail(err, field, msg);
    *out = (size_t)n;
    return 0;
}

static int take_render_field(const char *key, json_t *v, vf_lookup_request *out,
                             vf_request_error *err)
{
    static const char *const formats[] = { "markdown", "text", NULL };
    static const uint32_t format_bits[] = { 0, VF_RENDER_TEXT };
    static const char *const extracts[] = { "main", "page", NULL };
    static const uint32_t extract_bits[] = { 0, VF_RENDER_PAGE };
    static const char *const links[] = { "inline", "none", "list", NULL };
    static const uint32_t link_bits[] = { 0, VF_RENDER_LINKS_NONE, VF_RENDER_LINKS_LIST };
    if (strcmp(key, "format") == 0)
        return take_choice(v, key, formats, format_bits, out, err);
    if (strcmp(key, "extract") == 0)
        return take_choice(v, key, extracts, extract_bits, out, err);
    if (strcmp(key, "links") == 0)
        return take_choice(v, key, links, link_bits, out, err);
    if (strcmp(key, "max_chars") == 0)
        return take_count(v, key, 1, VF_MAX_MAX_CHARS, &out->max_chars, err);
    if (strcmp(key, "start_index") == 0)
        return take_count(v, key, 0, VF_MAX_START_INDEX, &out->start_index, err);
    return 1;
}

static int take_max_age(json_t *v, vf_lookup_request *out, vf_request_error *err)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > VF_MAX_MAX_AGE_S)
        return fail(err, "max_age_s", "must be an integer between 0 and 31536000");
    out->max_age_s = (unsigned)json_integer_value(v);
    out->has_max_age = true;
    return 0;
}

/* Output options, sorted and compact, so equal requests share a cache entry
 * whatever order the caller wrote them in. */
static int take_options_key(json_t *root, vf_lookup_request *out, vf_request_error *err)
{
    json_t *opts = json_copy(root);
    if (opts) {
        json_object_del(opts, "url");
        json_object_del(opts, "max_age_s");
        out->options_key = json_dumps(opts, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
        json_decref(opts);
    }
    return out->options_key ? 0 : fail(err, "", "out of memory");
}

int vf_request_parse(const char *body, size_t len, vf_lookup_request *out, vf_request_error *err)
{
    memset(out, 0, sizeof *out);
    out->min_chars = VF_DEFAULT_MIN_CHARS;
    out->max_chars = VF_DEFAULT_MAX_CHARS;

    if (len > VF_MAX_REQUEST_BODY)
        return fail(err, "", "request body is larger than 64 KiB");
    json_error_t jerr;
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root) {
        err->field[0] = '\0';
        char why[sizeof jerr.text];
        vf_ascii_line(jerr.text, strlen(jerr.text), why, sizeof why); /* jansson may quote a token */
        snprintf(err->message, sizeof err->message, "body is not valid JSON: %s (line %d, column %d)", why,
                 jerr.line, jerr.column);
        return -1;
    }
    int rc = 0;
    if (!json_is_object(root)) {
        rc = fail(err, "", "body must be a JSON object");
        goto done;
    }
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        if (strcmp(key, "url") == 0)
            rc = take_url(value, out, err);
        else if (strcmp(key, "must_contain") == 0)
            rc = take_must_contain(value, out, err);
        else if (strcmp(key, "must_contain_mode") == 0)
            rc = take_must_contain_mode(value, out, err);
        else if (strcmp(key, "min_chars") == 0)
            rc = take_min_chars(value, out, err);
        else if (strcmp(key, "max_attempts") == 0)
            rc = take_max_attempts(value, out, err);
        else if (strcmp(key, "max_age_s") == 0)
            rc = take_max_age(value, out, err);
        else if ((rc = take_render_field(key, value, out, err)) > 0) {
            /* The caller's name, escaped to printable ASCII and cut between
             * characters: a byte cut mid-UTF-8 would make the answer invalid. */
            vf_ascii_line(key, strlen(key), err->field, sizeof err->field);
            snprintf(err->message, sizeof err->message, "unknown field '%s'", err->field);
            rc = -1;
        }
        if (rc != 0)
            goto done;
    }
    if (!out->url)
        rc = fail(err, "url", "is required");
    else
        rc = take_options_key(root, out, err);
done:
    json_decref(root);
    if (rc != 0)
        vf_request_free(out);
    return rc;
}

void vf_request_free(vf_lookup_request *req)
{
    free(req->url);
    free(req->must_contain);
    free(req->options_key);
    req->url = NULL;
    req->must_contain = NULL;
    req->options_key = NULL;
}
