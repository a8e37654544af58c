#include "worker/content/dom_util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "worker/content/attr_store.h"

const char *vf_dom_attr(const vf_node *el, const char *name)
{
    if (el->type != VF_NODE_ELEMENT)
        return NULL;
    /* html_dom.c keeps every attribute a reader asks for there. */
    return vf_attr_find(vf_node_attrs(el), name);
}

bool vf_dom_attr_is(const vf_node *el, const char *name, const char *want)
{
    const char *v = vf_dom_attr(el, name);
    if (!v)
        return false;
    while (*v == ' ' || *v == '\t' || *v == '\n')
        v++;
    size_t n = strlen(want);
    if (strncasecmp(v, want, n) != 0)
        return false;
    for (v += n; *v; v++)
        if (*v != ' ' && *v != '\t' && *v != '\n')
            return false;
    return true;
}

vf_node *vf_dom_next(vf_node *n, const vf_node *root, bool skip_children)
{
    if (!skip_children && vf_node_first(n))
        return vf_node_first(n);
    while (n && n != root) {
        if (n->next)
            return n->next;
        n = n->parent;
    }
    return NULL;
}

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

size_t vf_dom_text_len(const vf_node *root)
{
    size_t k = 0;
    bool space = true;
    for (vf_node *n = (vf_node *)root; n; n = vf_dom_next(n, root, false)) {
        if (n->type != VF_NODE_TEXT || !vf_node_bytes(n))
            continue;
        for (const unsigned char *p = vf_node_bytes(n); *p; p++) {
            if (is_space(*p)) {
                if (!space)
                    k++;
                space = true;
            } else if ((*p & 0xC0) != 0x80) {
                k++;
                space = false;
            }
        }
    }
    return k;
}

void vf_dom_class_id(const vf_node *el, char *buf, size_t len)
{
    const char *c = vf_dom_attr(el, "class");
    const char *i = vf_dom_attr(el, "id");
    size_t o = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *s = pass == 0 ? c : i;
        if (!s)
            continue;
        for (; *s && o + 2 < len; s++)
            buf[o++] = (*s >= 'A' && *s <= 'Z') ? (char)(*s + 32) : *s;
        if (o + 1 < len)
            buf[o++] = ' ';
    }
    buf[o < len ? o : len - 1] = '\0';
}

bool vf_dom_hint_any(const char *soup, const char *const *words)
{
    if (!soup[0])
        return false;
    for (; *words; words++)
        if (strstr(soup, *words))
            return true;
    return false;
}

char *vf_dom_text_content(const vf_node *n)
{
    size_t len = 0;
    for (const vf_node *c = n; c; c = vf_dom_next((vf_node *)c, n, false))
        if (!vf_node_is_element(c))
            len += c->aux;
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (const vf_node *c = n; c; c = vf_dom_next((vf_node *)c, n, false)) {
        if (!vf_node_is_element(c)) {
            memcpy(out + o, c->u.text, c->aux);
            o += c->aux;
        }
    }
    out[o] = '\0';
    return out;
}
