#include "worker/content/html_trim.h"

#include <strings.h>

#include "worker/content/dom_util.h"

/* Every attribute a reader of the tree asks vf_dom_attr for. A new reader
 * of another attribute adds it here (the trim_attrs layout test checks the list against
 * the sources). */
static const char *const read_attrs[] = {
    "alt", "aria-hidden", "aria-modal", "class", "content", "datetime", "hidden", "href", "id",
    "itemprop", "lang", "name", "property", "rel", "role", "src", "start", "style", "type", NULL,
};

/* ASCII case folding, as strcasecmp's in the C locale the worker runs in. */
static unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* Every tag and attribute passes here: the first byte rules out most names
 * before any strcasecmp. */
static bool attr_is_read(const xmlChar *name)
{
    unsigned char c = fold(name[0]);
    for (const char *const *a = read_attrs; *a; a++)
        if ((unsigned char)(*a)[0] == c && strcasecmp((const char *)name, *a) == 0)
            return true;
    return false;
}

void vf_trim_attrs(const xmlChar **attrs, const xmlChar **kept, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; attrs && attrs[i] && k + 2 < cap; i += 2) {
        if (attr_is_read(attrs[i])) {
            kept[k++] = attrs[i];
            kept[k++] = attrs[i + 1];
        }
    }
    kept[k] = NULL;
}

bool vf_trim_keeps_blanks(const xmlChar *name)
{
    static const char *const verbatim[] = { "pre", "textarea", "listing", "xmp", "plaintext", NULL };
    unsigned char c = fold(name[0]);
    for (const char *const *v = verbatim; *v; v++)
        if ((unsigned char)(*v)[0] == c && strcasecmp((const char *)name, *v) == 0)
            return true;
    return false;
}

static bool is_block(const vf_node *n)
{
    return vf_node_is_element(n) && (vf_dom_tag(n).flags & VF_TAG_BLOCK);
}

bool vf_trim_blank_text(const vf_node *parent, const vf_node *last, const xmlChar *ch, int len)
{
    for (int i = 0; i < len; i++)
        if (ch[i] != ' ' && ch[i] != '\t' && ch[i] != '\n' && ch[i] != '\r' && ch[i] != '\f')
            return false;
    if (!parent || !vf_node_is_element(parent))
        return false;
    /* The line a block starts, or the one after a block, begins here: a
     * browser removes whitespace at the start of a line. */
    return last ? is_block(last) : is_block(parent);
}

bool vf_trim_raw_text(const vf_node *parent)
{
    if (!parent || !vf_node_is_element(parent))
        return false;
    if (parent->name_id == vf_tag_index("style"))
        return true;
    return vf_dom_tag(parent).id == VF_T_SCRIPT && !vf_dom_attr_is(parent, "type", "application/ld+json");
}
