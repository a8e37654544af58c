#include "worker/content/html_meta.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/uri.h>

#include "worker/content/dom_util.h"
#include "worker/content/tag_class.h"

/* Collapsed copy of s, at most cap bytes, cut on a character boundary;
 * invisible format characters dropped. NULL for an empty result. */
static char *clean_copy(const char *s, size_t cap)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *out = malloc((n < cap ? n : cap) + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    bool space = false;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t k = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        if (i + k > n)
            break;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
            (c == 0xC2 && (unsigned char)s[i + 1] == 0xA0)) {
            space = o > 0;
            i += k;
            continue;
        }
        bool hidden = (c == 0xC2 && (unsigned char)s[i + 1] == 0xAD) ||
                      (c == 0xE2 && (unsigned char)s[i + 1] == 0x80 &&
                       (((unsigned char)s[i + 2] >= 0x8B && (unsigned char)s[i + 2] <= 0x8F) ||
                        ((unsigned char)s[i + 2] >= 0xAA && (unsigned char)s[i + 2] <= 0xAE))) ||
                      (c == 0xE2 && (unsigned char)s[i + 1] == 0x81 &&
                       ((unsigned char)s[i + 2] == 0xA0 ||
                        ((unsigned char)s[i + 2] >= 0xA6 && (unsigned char)s[i + 2] <= 0xA9))) ||
                      (c == 0xEF && (unsigned char)s[i + 1] == 0xBB && (unsigned char)s[i + 2] == 0xBF) ||
                      (c < 0x20);
        if (hidden) {
            i += k;
            continue;
        }
        if (o + space + k > cap)
            break;
        if (space)
            out[o++] = ' ';
        space = false;
        memcpy(out + o, s + i, k);
        o += k;
        i += k;
    }
    out[o] = '\0';
    if (o == 0) {
        free(out);
        return NULL;
    }
    return out;
}

static char *node_text(vf_node *n, size_t cap)
{
    char *t = vf_dom_text_content(n);
    char *r = clean_copy(t, cap);
    free(t);
    return r;
}

/* A token of letters, digits, '-' and '_' (lang). */
static char *token_copy(const char *s, size_t cap)
{
    if (!s)
        return NULL;
    while (*s == ' ')
        s++;
    size_t n = 0;
    while (s[n] && n < cap &&
           ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
            (s[n] >= '0' && s[n] <= '9') || s[n] == '-' || s[n] == '_'))
        n++;
    return n ? strndup(s, n) : NULL;
}

/* An ISO 8601 date or date-time as the page states it: YYYY-MM-DD, then the
 * characters a time and zone may use. */
static char *iso_date(const char *s)
{
    if (!s)
        return NULL;
    while (*s == ' ' || *s == '\n' || *s == '\t')
        s++;
    for (int i = 0; i < 10; i++) {
        bool dash = i == 4 || i == 7;
        if (dash ? s[i] != '-' : !(s[i] >= '0' && s[i] <= '9'))
            return NULL;
    }
    size_t n = 10;
    while (s[n] && n < VF_META_MAX_TOKEN &&
           ((s[n] >= '0' && s[n] <= '9') || s[n] == 'T' || s[n] == ':' || s[n] == '+' ||
            s[n] == '-' || s[n] == 'Z' || s[n] == '.'))
        n++;
    return strndup(s, n);
}

static bool is_http_url(const char *u)
{
    return u && (strncasecmp(u, "http://", 7) == 0 || strncasecmp(u, "https://", 8) == 0);
}

static char *resolve_http(const char *href, const char *base)
{
    if (!href || !href[0])
        return NULL;
    xmlChar *abs = base ? xmlBuildURI((const xmlChar *)href, (const xmlChar *)base)
                        : xmlStrdup((const xmlChar *)href);
    char *r = NULL;
    if (abs && is_http_url((char *)abs) && strlen((char *)abs) <= VF_META_MAX_URL &&
        !strpbrk((char *)abs, " \t\r\n"))
        r = strdup((char *)abs);
    xmlFree(abs);
    return r;
}

char *vf_html_base_url(vf_dom *doc, const char *page_url)
{
    if (!page_url)
        return NULL;
    vf_node *root = vf_dom_root(doc);
    for (vf_node *n = root; n; n = vf_dom_next(n, root, false)) {
        if (n->type == VF_NODE_ELEMENT && vf_dom_tag(n).id == VF_T_BASE) {
            char *r = resolve_http(vf_dom_attr(n, "href"), page_url);
            if (r)
                return r;
            break;
        }
        if (n->type == VF_NODE_ELEMENT && vf_dom_tag(n).id == VF_T_BODY)
            break;
    }
    return strdup(page_url);
}

/* "datePublished": "..." anywhere in a JSON-LD block. */
static char *json_ld_date(const char *s)
{
    const char *p = s ? strstr(s, "\"datePublished\"") : NULL;
    if (!p)
        return NULL;
    p += 15;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    return *p == '"' ? iso_date(p + 1) : NULL;
}

static void take(char **slot, char *value)
{
    if (!*slot)
        *slot = value;
    else
        free(value);
}

bool vf_html_meta_read(vf_dom *doc, const char *base_url, vf_page_meta *m)
{
    vf_node *root = vf_dom_root(doc);
    if (!root)
        return true;
    if (root->type == VF_NODE_ELEMENT)
        m->lang = token_copy(vf_dom_attr(root, "lang"), VF_META_MAX_TOKEN);
    char *og_title = NULL, *og_desc = NULL, *og_url = NULL, *time_date = NULL;
    for (vf_node *n = root; n; n = vf_dom_next(n, root, false)) {
        if (n->type != VF_NODE_ELEMENT)
            continue;
        vf_tag_info t = vf_dom_tag(n);
        switch (t.id) {
        case VF_T_TITLE:
            take(&m->title, node_text(n, VF_META_MAX_TITLE));
            break;
        case VF_T_H1: case VF_T_H2:
            if (!m->h1)
                take(&m->h1, node_text(n, VF_META_MAX_TITLE));
            break;
        case VF_T_LINK: {
            const char *rel = vf_dom_attr(n, "rel");
            if (rel && strcasecmp(rel, "canonical") == 0)
                take(&m->canonical_url, resolve_http(vf_dom_attr(n, "href"), base_url));
            break;
        }
        case VF_T_META: {
            const char *name = vf_dom_attr(n, "name");
            const char *prop = vf_dom_attr(n, "property");
            const char *ip = vf_dom_attr(n, "itemprop");
            const char *content = vf_dom_attr(n, "content");
            const char *key = prop ? prop : name ? name : ip;
            if (!key || !content)
                break;
            if (strcasecmp(key, "description") == 0)
                take(&m->description, clean_copy(content, VF_META_MAX_DESCRIPTION));
            else if (strcasecmp(key, "og:description") == 0)
                take(&og_desc, clean_copy(content, VF_META_MAX_DESCRIPTION));
            else if (strcasecmp(key, "og:title") == 0)
                take(&og_title, clean_copy(content, VF_META_MAX_TITLE));
            else if (strcasecmp(key, "og:url") == 0)
                take(&og_url, resolve_http(content, base_url));
            else if (strcasecmp(key, "article:published_time") == 0 ||
                     strcasecmp(key, "datePublished") == 0 || strcasecmp(key, "date") == 0 ||
                     strcasecmp(key, "pubdate") == 0 || strcasecmp(key, "publish-date") == 0 ||
                     strcasecmp(key, "dc.date.issued") == 0 || strcasecmp(key, "dcterms.date") == 0)
                take(&m->published, iso_date(content));
            break;
        }
        case VF_T_SCRIPT:
            if (!m->published && vf_dom_attr_is(n, "type", "application/ld+json")) {
                char *c = vf_dom_text_content(n);
                take(&m->published, json_ld_date(c));
                free(c);
            }
            break;
        case VF_T_TIME:
            if (!time_date)
                time_date = iso_date(vf_dom_attr(n, "datetime"));
            break;
        default:
            if (!m->published && (vf_dom_attr_is(n, "itemprop", "datePublished")))
                take(&m->published, iso_date(vf_dom_attr(n, "datetime") ? vf_dom_attr(n, "datetime")
                                                                        : vf_dom_attr(n, "content")));
            break;
        }
    }
    take(&m->title, og_title);
    take(&m->description, og_desc);
    take(&m->canonical_url, og_url);
    take(&m->published, time_date);
    return true;
}
