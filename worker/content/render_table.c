/* GFM pipe tables; a layout table (one column, or nested tables) renders
 * as the blocks it holds. */
#include "worker/content/render_emit.h"

#include <stdlib.h>
#include <string.h>

#include "worker/content/dom_util.h"
#include "worker/content/main_content.h"
#include "worker/content/tag_class.h"

/* ---------------------------------------------------------------- tables */

typedef struct {
    vf_node *cells[MAX_TABLE_CELLS];
    size_t n_cells;
    size_t row_start[MAX_TABLE_CELLS];
    size_t n_rows;
    size_t cols;
} table_shape;

static bool table_rows(vf_node *el, table_shape *t, bool *layout)
{
    for (vf_node *n = vf_node_first(el); n; n = n->next) {
        if (n->type != VF_NODE_ELEMENT || vf_main_skips(n))
            continue;
        vf_tag_info ti = vf_dom_tag(n);
        if (ti.id == VF_T_THEAD || ti.id == VF_T_TBODY || ti.id == VF_T_TFOOT) {
            if (!table_rows(n, t, layout))
                return false;
        } else if (ti.id == VF_T_TR) {
            if (t->n_rows >= MAX_TABLE_CELLS)
                return false;
            t->row_start[t->n_rows++] = t->n_cells;
            size_t cols = 0;
            for (vf_node *c = vf_node_first(n); c; c = c->next) {
                if (c->type != VF_NODE_ELEMENT || vf_main_skips(c))
                    continue;
                vf_tag_info ci = vf_dom_tag(c);
                if (ci.id != VF_T_TD && ci.id != VF_T_TH)
                    continue;
                if (t->n_cells >= MAX_TABLE_CELLS)
                    return false;
                t->cells[t->n_cells++] = c;
                cols++;
                /* Blocks inside a cell make it page layout, not data. */
                for (vf_node *d = vf_node_first(c); d; d = vf_dom_next(d, c, false)) {
                    if (d->type != VF_NODE_ELEMENT)
                        continue;
                    vf_tag_info di = vf_dom_tag(d);
                    if (di.id == VF_T_TABLE || di.id == VF_T_P || (di.flags & VF_TAG_LIST) ||
                        (di.flags & VF_TAG_HEADING) || di.id == VF_T_PRE || di.id == VF_T_DIV)
                        *layout = true;
                }
            }
            if (cols > t->cols)
                t->cols = cols;
        } else if (ti.id != VF_T_CAPTION) {
            *layout = true;
        }
    }
    return true;
}

static char *cell_text(emitter *e, vf_node *cell)
{
    emitter sub = { .o = e->o, .flat = true, .base = e->base, .line_start = true };
    vf_tbuf_init(&sub.out, e->o->max_out);
    vf_render_children(&sub, cell);
    size_t n;
    char *s = vf_tbuf_take(&sub.out, &n);
    for (size_t i = 0; i < sub.n_links; i++)
        free(sub.links[i]);
    free(sub.links);
    return s;
}

static void put_cell(emitter *e, const char *s)
{
    for (; *s; s++) {
        if (*s == '|' && e->o->markdown)
            em_puts(e, "\\|");
        else if (*s == '\n')
            em_puts(e, " ");
        else
            em_put(e, s, 1);
    }
}

/* A table used for page layout: every cell is a block of its own. */
static void render_layout(emitter *e, vf_node *el)
{
    for (vf_node *n = vf_node_first(el); n; n = n->next) {
        if (n->type != VF_NODE_ELEMENT) {
            vf_render_node(e, n);
            continue;
        }
        if (vf_main_skips(n))
            continue;
        vf_tag_info ti = vf_dom_tag(n);
        if (ti.id == VF_T_TR || ti.id == VF_T_TBODY || ti.id == VF_T_THEAD || ti.id == VF_T_TFOOT) {
            render_layout(e, n);
        } else if (ti.id == VF_T_TD || ti.id == VF_T_TH || ti.id == VF_T_CAPTION) {
            em_want(e, PEND_LINE);
            vf_render_children(e, n);
            em_want(e, PEND_LINE);
        } else {
            vf_render_node(e, n);
        }
    }
}

void vf_render_table(emitter *e, vf_node *table)
{
    table_shape *t = calloc(1, sizeof *t);
    bool layout = false;
    if (!t)
        return;
    if (!table_rows(table, t, &layout) || t->cols < 2 || t->n_rows < 1 || e->flat)
        layout = true;
    if (layout) {
        free(t);
        em_want(e, PEND_LINE);
        render_layout(e, table);
        em_want(e, PEND_LINE);
        return;
    }
    em_want(e, PEND_BLANK);
    /* The caption comes first wherever it stands: the table's text is not
     * read in tree order, so none of it is reported as reached. */
    vf_render_opts unordered = *e->o;
    unordered.text_reached = NULL;
    const vf_render_opts *keep = e->o;
    e->o = &unordered;
    for (vf_node *c = vf_node_first(table); c; c = c->next)
        if (c->type == VF_NODE_ELEMENT && vf_dom_tag(c).id == VF_T_CAPTION) {
            vf_render_children(e, c);
            em_want(e, PEND_BLANK);
        }
    bool md = e->o->markdown;
    for (size_t r = 0; r < t->n_rows; r++) {
        size_t from = t->row_start[r];
        size_t to = r + 1 < t->n_rows ? t->row_start[r + 1] : t->n_cells;
        if (to == from)
            continue;
        em_want(e, PEND_LINE);
        em_flush(e, 'x');
        if (md)
            em_puts(e, "|");
        for (size_t c = 0; c < t->cols; c++) {
            char *s = from + c < to ? cell_text(e, t->cells[from + c]) : NULL;
            if (md)
                em_puts(e, " ");
            else if (c > 0)
                em_puts(e, "\t");
            if (s)
                put_cell(e, s);
            free(s);
            if (md)
                em_puts(e, " |");
        }
        if (md && r == 0) {
            em_puts(e, "\n");
            em_put(e, e->prefix, e->prefix_len);
            em_puts(e, "|");
            for (size_t c = 0; c < t->cols; c++)
                em_puts(e, " --- |");
        }
        e->last_cp = '|';
    }
    e->o = keep;
    free(t);
    em_want(e, PEND_BLANK);
}

/* ---------------------------------------------------------------- walk */

