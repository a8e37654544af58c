#include "broker/judge/mask_forms.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add(vf_mask_forms *m, const char *s, size_t len)
{
    if (len == 0)
        return 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->lens[i] == len && memcmp(m->forms[i], s, len) == 0)
            return 0;
    char **f = realloc(m->forms, (m->n + 1) * sizeof *f);
    if (!f)
        return -1;
    m->forms = f;
    size_t *l = realloc(m->lens, (m->n + 1) * sizeof *l);
    if (!l)
        return -1;
    m->lens = l;
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    m->forms[m->n] = copy;
    m->lens[m->n] = len;
    m->n++;
    return 0;
}

static int add_percent(vf_mask_forms *m, const char *s, const char *hex)
{
    size_t len = strlen(s);
    char *out = malloc(len * 3 + 1);
    if (!out)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    int rc = add(m, out, o);
    free(out);
    return rc;
}

static int add_base64(vf_mask_forms *m, const char *s)
{
    size_t len = strlen(s);
    size_t cap = 4 * ((len + 2) / 3) + 1;
    char *std = malloc(cap);
    if (!std)
        return -1;
    int n = EVP_EncodeBlock((unsigned char *)std, (const unsigned char *)s, (int)len);
    int rc = add(m, std, (size_t)n);
    size_t unpadded = (size_t)n;
    while (unpadded > 0 && std[unpadded - 1] == '=')
        unpadded--;
    if (rc == 0)
        rc = add(m, std, unpadded);
    for (int i = 0; i < n; i++)
        std[i] = std[i] == '+' ? '-' : std[i] == '/' ? '_' : std[i];
    if (rc == 0)
        rc = add(m, std, (size_t)n);
    if (rc == 0)
        rc = add(m, std, unpadded);
    free(std);
    return rc;
}

/* Escaped spellings a provider's serializer may reflect and the worker's
 * decoder would turn back into the key: JSON ("\/", "\u002b" in either hex
 * case, as PHP and .NET emit) and HTML character references ("&#43;",
 * "&#x2b;"). Each family rewrites every non-alphanumeric byte; "\/" is also
 * tried alone because it is the common default. */
typedef enum { ESC_JSON_SLASH, ESC_JSON_U_LOWER, ESC_JSON_U_UPPER, ESC_HTML_DEC, ESC_HTML_HEX } escape_family;

static int add_escaped(vf_mask_forms *m, const char *s, escape_family fam)
{
    size_t len = strlen(s);
    char *out = malloc(len * 8 + 1);
    if (!out)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalnum(c) || (fam == ESC_JSON_SLASH && c != '/')) {
            out[o++] = (char)c;
            continue;
        }
        switch (fam) {
        case ESC_JSON_SLASH: o += (size_t)sprintf(out + o, "\\/"); break;
        case ESC_JSON_U_LOWER: o += (size_t)sprintf(out + o, "\\u%04x", c); break;
        case ESC_JSON_U_UPPER: o += (size_t)sprintf(out + o, "\\u%04X", c); break;
        case ESC_HTML_DEC: o += (size_t)sprintf(out + o, "&#%u;", c); break;
        case ESC_HTML_HEX: o += (size_t)sprintf(out + o, "&#x%x;", c); break;
        }
    }
    int rc = o == len ? 0 : add(m, out, o);   /* nothing escaped: the raw form has it */
    free(out);
    return rc;
}

int vf_mask_forms_build(vf_mask_forms *m, const char *const *secrets, size_t n_secrets)
{
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < n_secrets; i++) {
        const char *s = secrets[i];
        if (!s || !*s)
            continue;
        if (add(m, s, strlen(s)) != 0 || add_percent(m, s, "0123456789ABCDEF") != 0 ||
            add_percent(m, s, "0123456789abcdef") != 0 || add_base64(m, s) != 0 ||
            add_escaped(m, s, ESC_JSON_SLASH) != 0 || add_escaped(m, s, ESC_JSON_U_LOWER) != 0 ||
            add_escaped(m, s, ESC_JSON_U_UPPER) != 0 || add_escaped(m, s, ESC_HTML_DEC) != 0 ||
            add_escaped(m, s, ESC_HTML_HEX) != 0) {
            vf_mask_forms_free(m);
            return -1;
        }
    }
    return 0;
}

void vf_mask_forms_free(vf_mask_forms *m)
{
    for (size_t i = 0; i < m->n; i++) {
        explicit_bzero(m->forms[i], m->lens[i]);
        free(m->forms[i]);
    }
    free(m->forms);
    free(m->lens);
    memset(m, 0, sizeof *m);
}
