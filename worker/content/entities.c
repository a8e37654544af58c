#include "worker/content/entities.h"

#include <stdlib.h>
#include <string.h>

#include <libxml/HTMLparser.h>

typedef struct {
    const char *name;
    const char *value;
} named_ref;

static const named_ref refs[] = {
#include "worker/content/html5_entities.inc"
};

static int by_name(const void *key, const void *elem)
{
    return strcmp(key, ((const named_ref *)elem)->name);
}

static bool is_name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The replacement for &name; or NULL to leave it: libxml2 decodes HTML4's. */
static const char *replacement(const char *name)
{
    if (htmlEntityLookup((const xmlChar *)name))
        return NULL;
    const named_ref *r = bsearch(name, refs, sizeof refs / sizeof refs[0], sizeof refs[0], by_name);
    if (!r)
        return NULL;
    /* Markup characters stay text as numeric references. */
    switch (r->value[0]) {
    case '&': return r->value[1] ? NULL : "&#38;";
    case '<': return r->value[1] ? NULL : "&#60;";
    case '>': return r->value[1] ? NULL : "&#62;";
    case '"': return "&#34;";
    case '\'': return "&#39;";
    default: return r->value;
    }
}

char *vf_html5_entities_rewrite(const char *in, size_t len, size_t *out_len, bool *oom)
{
    *oom = false;
    *out_len = 0;
    char *out = NULL;
    size_t o = 0, copied = 0; /* input up to copied is in out */
    const char *p = in, *end = in + len;
    while ((p = memchr(p, '&', (size_t)(end - p))) != NULL) {
        size_t n = 0;
        while (p + 1 + n < end && n < 32 && is_name_char((unsigned char)p[1 + n]))
            n++;
        if (n == 0 || p + 1 + n >= end || p[1 + n] != ';') {
            p++;
            continue;
        }
        char name[33];
        memcpy(name, p + 1, n);
        name[n] = '\0';
        const char *rep = replacement(name);
        if (!rep) {
            p += 1 + n;
            continue;
        }
        if (!out) {
            /* &nGt; and &nLt; (5 bytes) are the only ones that grow, to 6. */
            out = malloc(len + len / 5 + 1);
            if (!out) {
                *oom = true;
                return NULL;
            }
        }
        size_t keep = (size_t)(p - (in + copied));
        memcpy(out + o, in + copied, keep);
        o += keep;
        size_t rl = strlen(rep);
        memcpy(out + o, rep, rl);
        o += rl;
        p += n + 2;
        copied = (size_t)(p - in);
    }
    if (!out)
        return NULL;
    memcpy(out + o, in + copied, len - copied);
    o += len - copied;
    out[o] = '\0';
    *out_len = o;
    return out;
}
