#include "broker/judge/mask_forms.h"

#include <ctype.h>
#include <stdbool.h>
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

/* The key inside a longer base64 text (a page's bytes in base64, say):
 * wherever it starts, the groups that hold only its bytes encode one of
 * three strings, its bytes from offset 0, 1 or 2 cut to whole groups.
 * Masking these keeps a base64 page from decoding to the key. Too short a
 * core could match by chance, so a key needs 12 bytes past the offset. */
#define BASE64_CORE_MIN_BYTES 12

static int add_base64_cores(vf_mask_forms *m, const char *s)
{
    size_t len = strlen(s);
    int rc = 0;
    for (size_t d = 0; d < 3 && rc == 0; d++) {
        size_t whole = len > d ? (len - d) / 3 * 3 : 0;
        if (whole < BASE64_CORE_MIN_BYTES)
            continue;
        char *core = malloc(4 * whole / 3 + 1);
        if (!core)
            return -1;
        int n = EVP_EncodeBlock((unsigned char *)core, (const unsigned char *)s + d, (int)whole);
        rc = add(m, core, (size_t)n);
        for (int i = 0; i < n; i++)
            core[i] = core[i] == '+' ? '-' : core[i] == '/' ? '_' : core[i];
        if (rc == 0)
            rc = add(m, core, (size_t)n);
        explicit_bzero(core, (size_t)n);
        free(core);
    }
    return rc;
}

/* The key's base64 (a Basic header's value, say) echoed inside a page that
 * itself travels as base64: the cores of that text too. */
static int add_base64_of_base64_cores(vf_mask_forms *m, const char *s)
{
    size_t len = strlen(s);
    char *std = malloc(4 * ((len + 2) / 3) + 1);
    if (!std)
        return -1;
    EVP_EncodeBlock((unsigned char *)std, (const unsigned char *)s, (int)len);
    int rc = add_base64_cores(m, std);
    explicit_bzero(std, strlen(std));
    free(std);
    return rc;
}

/* Escaped spellings a provider's serializer may reflect and the worker's
 * decoder would turn back into the key: JSON ("\/", "\u002b" in either hex
 * case, as PHP and .NET emit) and HTML character references, decimal
 * ("&#43;", zero-padded "&#043;" ... "&#0000043;") and hex ("&#x2b;",
 * "&#X2B;", any mix of x/X and digit case, zero-padded to 2..7 digits).
 * Each spelling rewrites every non-alphanumeric byte; "\/" is also tried
 * alone because it is the common default. */
typedef enum { ESC_JSON_SLASH, ESC_JSON_U, ESC_HTML_DEC, ESC_HTML_HEX } escape_family;

typedef struct {
    escape_family family;
    bool upper_x;     /* "&#X" rather than "&#x" */
    bool upper_digits; /* "2B" rather than "2b" (JSON and hex entities) */
    int width;        /* zero-padded digits, 0 = as few as possible */
} escape_spelling;

static size_t escape_byte(char *out, unsigned char c, const escape_spelling *e)
{
    switch (e->family) {
    case ESC_JSON_SLASH: return (size_t)sprintf(out, "\\/");
    case ESC_JSON_U: return (size_t)sprintf(out, e->upper_digits ? "\\u%04X" : "\\u%04x", c);
    case ESC_HTML_DEC: return (size_t)sprintf(out, "&#%0*u;", e->width, c);
    case ESC_HTML_HEX:
        return (size_t)sprintf(out, e->upper_digits ? "&#%c%0*X;" : "&#%c%0*x;", e->upper_x ? 'X' : 'x', e->width, c);
    }
    return 0;
}

static int add_escaped(vf_mask_forms *m, const char *s, const escape_spelling *e)
{
    size_t len = strlen(s);
    char *out = malloc(len * 12 + 1);
    if (!out)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalnum(c) || (e->family == ESC_JSON_SLASH && c != '/'))
            out[o++] = (char)c;
        else
            o += escape_byte(out + o, c, e);
    }
    int rc = o == len ? 0 : add(m, out, o);   /* nothing escaped: the raw form has it */
    free(out);
    return rc;
}

#define ENTITY_WIDTH_MAX 7

static int add_all_escaped(vf_mask_forms *m, const char *s)
{
    escape_spelling e = { ESC_JSON_SLASH, false, false, 0 };
    int rc = add_escaped(m, s, &e);
    for (int up = 0; up < 2 && rc == 0; up++)
        rc = add_escaped(m, s, &(escape_spelling){ ESC_JSON_U, false, up, 0 });
    for (int w = 0; w <= ENTITY_WIDTH_MAX && rc == 0; w++) {
        if (w == 1)
            continue; /* "%01u" is "%u" */
        rc = add_escaped(m, s, &(escape_spelling){ ESC_HTML_DEC, false, false, w });
        for (int x = 0; x < 4 && rc == 0; x++)
            rc = add_escaped(m, s, &(escape_spelling){ ESC_HTML_HEX, x & 1, x >> 1, w });
    }
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
            add_percent(m, s, "0123456789abcdef") != 0 || add_base64(m, s) != 0 || add_base64_cores(m, s) != 0 ||
            add_base64_of_base64_cores(m, s) != 0 ||
            add_all_escaped(m, s) != 0) {
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
