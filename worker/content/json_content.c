#include "worker/content/json_content.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

/* Unescapes one reference token [s, s+n) (~1 -> '/', ~0 -> '~') into out
 * (room for n+1). False if a '~' is not followed by 0 or 1. */
static bool unescape_token(const char *s, size_t n, char *out, size_t *out_len)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '~') {
            out[k++] = s[i];
            continue;
        }
        if (i + 1 >= n || (s[i + 1] != '0' && s[i + 1] != '1'))
            return false;
        out[k++] = s[i + 1] == '0' ? '~' : '/';
        i++;
    }
    out[k] = '\0';
    *out_len = k;
    return true;
}

/* An array index token: "0" or digits without a leading zero, fitting size_t. */
static bool parse_index(const char *tok, size_t n, size_t *index)
{
    if (n == 0 || (n > 1 && tok[0] == '0'))
        return false;
    size_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (tok[i] < '0' || tok[i] > '9')
            return false;
        size_t d = (size_t)(tok[i] - '0');
        if (v > (SIZE_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *index = v;
    return true;
}

/* Walks pointer from root. Returns the value or NULL; *status says why not. */
static json_t *resolve(json_t *root, const char *pointer, vf_json_status *status)
{
    size_t plen = strlen(pointer);
    char *tok = malloc(plen + 1);
    if (!tok) {
        *status = VF_JSON_NOMEM;
        return NULL;
    }
    json_t *cur = root;
    const char *p = pointer;
    *status = VF_JSON_OK;
    if (plen && *p != '/')
        *status = VF_JSON_BAD_POINTER;
    while (*status == VF_JSON_OK && *p == '/') {
        p++;
        size_t n = strcspn(p, "/");
        size_t tlen;
        if (!unescape_token(p, n, tok, &tlen)) {
            *status = VF_JSON_BAD_POINTER;
            break;
        }
        p += n;
        json_t *next = NULL;
        size_t index;
        if (json_is_object(cur))
            next = json_object_getn(cur, tok, tlen);
        else if (json_is_array(cur) && parse_index(tok, tlen, &index))
            next = json_array_get(cur, index);
        if (!next)
            *status = VF_JSON_NOT_FOUND;
        cur = next;
    }
    free(tok);
    return *status == VF_JSON_OK ? cur : NULL;
}

/* Copies a jansson string without NULs, cut at max_out on a UTF-8 boundary. */
static char *copy_text(const char *s, size_t n, size_t max_out, size_t *out_len)
{
    char *out = malloc((n < max_out ? n : max_out) + 1);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n && k < max_out; i++)
        if (s[i] != '\0')
            out[k++] = s[i];
    if (k == max_out && k < n) {
        /* Drop a character the cut split: back up over continuation bytes and
         * the lead byte they belong to. */
        size_t end = k;
        while (end > 0 && ((unsigned char)out[end - 1] & 0xC0) == 0x80)
            end--;
        if (end > 0 && ((unsigned char)out[end - 1] & 0x80)) {
            unsigned char lead = (unsigned char)out[end - 1];
            size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
            if (k - (end - 1) < need)
                k = end - 1;
        }
    }
    out[k] = '\0';
    *out_len = k;
    return out;
}

vf_json_status vf_json_extract(const char *body, size_t len, const char *pointer,
                               size_t max_out, char **text, size_t *text_len,
                               char *detail, size_t detail_len)
{
    *text = NULL;
    *text_len = 0;
    detail[0] = '\0';
    json_error_t jerr;
    /* DECODE_ANY: a bare string is a JSON text too. ALLOW_NUL: a "\u0000"
     * inside the content is dropped, not a parse failure. */
    json_t *root = json_loadb(body, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!root) {
        snprintf(detail, detail_len, "response is not JSON");
        return VF_JSON_NOT_JSON;
    }
    vf_json_status st;
    json_t *v = resolve(root, pointer, &st);
    if (st == VF_JSON_OK && !json_is_string(v)) {
        snprintf(detail, detail_len, "json pointer '%s' is %s, not a string", pointer,
                 type_name(v));
        st = VF_JSON_WRONG_TYPE;
    } else if (st == VF_JSON_OK) {
        *text = copy_text(json_string_value(v), json_string_length(v), max_out, text_len);
        if (!*text)
            st = VF_JSON_NOMEM;
    }
    if (st == VF_JSON_NOT_FOUND)
        snprintf(detail, detail_len, "json pointer '%s' not found", pointer);
    else if (st == VF_JSON_BAD_POINTER)
        snprintf(detail, detail_len, "json pointer '%s' is not a valid RFC 6901 pointer",
                 pointer);
    else if (st == VF_JSON_NOMEM)
        snprintf(detail, detail_len, "out of memory");
    json_decref(root);
    return st;
}
