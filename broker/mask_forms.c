#include "broker/mask_forms.h"

#include <ctype.h>
#include <openssl/evp.h>
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

int vf_mask_forms_build(vf_mask_forms *m, const char *const *secrets, size_t n_secrets)
{
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < n_secrets; i++) {
        const char *s = secrets[i];
        if (!s || !*s)
            continue;
        if (add(m, s, strlen(s)) != 0 || add_percent(m, s, "0123456789ABCDEF") != 0 ||
            add_percent(m, s, "0123456789abcdef") != 0 || add_base64(m, s) != 0) {
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
