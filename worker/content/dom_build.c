#include "worker/content/dom_build.h"

#include <stdlib.h>

#include "worker/content/tag_class.h"

bool vf_build_init(vf_dom_builder *b, vf_dom *dom)
{
    b->dom = dom;
    b->depth = 0;
    b->root_last = NULL;
    b->open = calloc(VF_DOM_MAX_OPEN, sizeof *b->open);
    return b->open != NULL;
}

void vf_build_done(vf_dom_builder *b)
{
    free(b->open);
    b->open = NULL;
}

static void link_child(vf_node *parent, vf_node **last, vf_node *child)
{
    child->parent = parent;
    if (*last)
        (*last)->next = child;
    else
        parent->u.first = child;
    *last = child;
}

static uint16_t name_id(vf_dom *d, const char *name, vf_dom_status *st)
{
    uint16_t id = vf_tag_index(name);
    if (id)
        return id;
    return vf_dom_intern_name(d, name, st);
}

vf_node *vf_build_open(vf_dom_builder *b, const char *name, size_t attr_bytes,
                       void (*write_attrs)(char *dst, const void *ctx), const void *ctx,
                       bool beside_root, vf_dom_status *st)
{
    if (b->depth >= VF_DOM_MAX_OPEN) {
        *st = VF_DOM_FULL;
        return NULL;
    }
    uint16_t id = name_id(b->dom, name, st);
    if (!id)
        return NULL;
    vf_node *el = vf_dom_alloc_node(b->dom, attr_bytes, st);
    if (!el)
        return NULL;
    el->type = VF_NODE_ELEMENT;
    el->name_id = id;
    if (attr_bytes) {
        write_attrs((char *)(el + 1), ctx);
        el->flags |= VF_NODE_HAS_ATTRS;
    }
    vf_node *root = vf_dom_root(b->dom);
    if (b->depth > 0) {
        vf_open_el *top = &b->open[b->depth - 1];
        link_child(top->el, &top->last, el);
    } else if (!root) {
        vf_dom_set_root(b->dom, el);
    } else if (!beside_root) {
        link_child(root, &b->root_last, el);
    }
    b->open[b->depth++] = (vf_open_el){ el, NULL };
    return el;
}

void vf_build_close(vf_dom_builder *b)
{
    if (b->depth == 0)
        return;
    vf_open_el *top = &b->open[--b->depth];
    if (top->el == vf_dom_root(b->dom))
        b->root_last = top->last;
}

vf_node *vf_build_top(const vf_dom_builder *b)
{
    return b->depth ? b->open[b->depth - 1].el : NULL;
}

vf_node *vf_build_top_last(const vf_dom_builder *b)
{
    return b->depth ? b->open[b->depth - 1].last : NULL;
}

vf_dom_status vf_build_text(vf_dom_builder *b, int type, const char *s, size_t n)
{
    if (b->depth == 0)
        return VF_DOM_OK;
    vf_open_el *top = &b->open[b->depth - 1];
    if (top->last && top->last->type == type)
        return vf_dom_append_text(b->dom, top->last, s, n);
    vf_dom_status st;
    vf_node *t = vf_dom_alloc_node(b->dom, 0, &st);
    if (!t)
        return st;
    t->type = (uint8_t)type;
    st = vf_dom_set_text(b->dom, t, s, n);
    if (st != VF_DOM_OK)
        return st;
    link_child(top->el, &top->last, t);
    return VF_DOM_OK;
}
