#include "worker/content/prune.h"

#include <string.h>
#include <strings.h>

#include "worker/content/dom_util.h"
#include "worker/content/tag_class.h"

/* A form that wraps the whole page (ASP.NET does) holds this much text and is kept. */
#define FORM_KEEP_CHARS 1500

/* Landmark roles that are never the content. */
static const char *const chrome_roles[] = {
    "navigation", "banner", "contentinfo", "complementary", "search", "dialog", "alertdialog",
    "alert", "menu", "menubar", "toolbar", "tablist", NULL,
};

/* Consent-banner fingerprints in class/id. */
static const char *const consent_hints[] = {
    "cookie", "consent", "gdpr", "onetrust", "cookiebot", "didomi", "truste", "qc-cmp",
    "cmp-container", "sp_message", "cc-window", "cc-banner", "usercentrics", "privacy-banner",
    NULL,
};

/* Inline style text with blanks removed and lowercased, then a property check. */
static bool style_hides(const char *style)
{
    char buf[512];
    size_t o = 0;
    for (const char *s = style; *s && o + 1 < sizeof buf; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
            continue;
        buf[o++] = (*s >= 'A' && *s <= 'Z') ? (char)(*s + 32) : *s;
    }
    buf[o] = '\0';
    for (const char *p = buf; (p = strstr(p, "display:none")) != NULL; p++)
        if (p == buf || p[-1] == ';' || p[-1] == '{')
            return true;
    for (const char *p = buf; (p = strstr(p, "visibility:hidden")) != NULL; p++)
        if (p == buf || p[-1] == ';' || p[-1] == '{')
            return true;
    return false;
}

bool vf_prune_is_hidden(const vf_node *el)
{
    if (vf_dom_attr(el, "hidden"))
        return true;
    if (vf_dom_attr_is(el, "aria-hidden", "true"))
        return true;
    const char *style = vf_dom_attr(el, "style");
    return style && style_hides(style);
}

static bool role_is_chrome(const vf_node *el)
{
    const char *role = vf_dom_attr(el, "role");
    if (!role)
        return false;
    for (const char *const *r = chrome_roles; *r; r++)
        if (strcasecmp(role, *r) == 0)
            return true;
    return false;
}

static bool is_password_input(const vf_node *el)
{
    return vf_dom_tag(el).id == VF_T_INPUT && vf_dom_attr_is(el, "type", "password");
}

static bool holds_password(vf_node *el)
{
    for (vf_node *n = el; n; n = vf_dom_next(n, el, false))
        if (n->type == VF_NODE_ELEMENT && is_password_input(n))
            return true;
    return false;
}

static void add_anchor(vf_prune_report *rep, vf_node *n)
{
    if (n && rep->n_password < VF_PRUNE_MAX_ANCHORS)
        rep->password_anchor[rep->n_password++] = n;
}

static bool should_drop(vf_node *el)
{
    vf_tag_info t = vf_dom_tag(el);
    if (t.id == VF_T_HTML || t.id == VF_T_BODY)
        return false;
    if (t.flags & VF_TAG_DROP)
        return t.id != VF_T_HEAD; /* head is read for metadata, never rendered */
    if (vf_prune_is_hidden(el))
        return true;
    if (t.flags & VF_TAG_CHROME) {
        if (t.id == VF_T_FORM)
            return vf_dom_text_len(el) < FORM_KEEP_CHARS;
        return true;
    }
    if (role_is_chrome(el) || vf_dom_attr_is(el, "aria-modal", "true"))
        return true;
    if (t.id == VF_T_MAIN || t.id == VF_T_ARTICLE)
        return false;
    char soup[256];
    vf_dom_class_id(el, soup, sizeof soup);
    /* A wrapper that merely mentions a banner (class="has-cookie-bar") holds
     * the page: only small elements are taken for banners. */
    return vf_dom_hint_any(soup, consent_hints) && vf_dom_text_len(el) < 2000;
}

/* Walks the tree in document order with the previous sibling at hand, so
 * a dropped subtree is unlinked in O(1) (nodes have no prev pointer). Its
 * nodes stay in the arena until the tree is freed. */
void vf_prune(vf_node *root, vf_prune_report *rep)
{
    memset(rep, 0, sizeof *rep);
    vf_node *parent = root, *prev = NULL, *n = vf_node_first(root);
    for (;;) {
        if (!n) {
            if (parent == root)
                return;
            prev = parent;
            n = parent->next;
            parent = parent->parent;
            continue;
        }
        if (n->type != VF_NODE_ELEMENT || vf_dom_tag(n).id == VF_T_HEAD) {
            prev = n;
            n = n->next;
            continue;
        }
        if (should_drop(n)) {
            if (holds_password(n))
                add_anchor(rep, n->parent);
            vf_node *next = n->next;
            if (prev)
                prev->next = next;
            else
                parent->u.first = next;
            n = next;
            continue;
        }
        if (is_password_input(n))
            add_anchor(rep, n);
        if (vf_node_first(n)) {
            parent = n;
            prev = NULL;
            n = vf_node_first(n);
        } else {
            prev = n;
            n = n->next;
        }
    }
}
