/* The renderer's emitter: an output buffer that turns DOM text into
 * Markdown or plain text with pending separators, line prefixes (quotes,
 * lists) and glue between inline boxes. Private to worker/content/render*.c. */
#ifndef VERIFETCH_WORKER_RENDER_EMIT_H
#define VERIFETCH_WORKER_RENDER_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/content/dom_tree.h"

#include "worker/content/render_opts.h"
#include "worker/content/text_buf.h"

#define PREFIX_MAX 128
#define MAX_LINKS 1000
#define MAX_TABLE_CELLS 4096

enum { PEND_NONE = 0, PEND_SPACE, PEND_LINE, PEND_BLANK };

typedef struct {
    vf_tbuf out;
    const vf_render_opts *o;
    int pending;
    bool soft_sep;          /* an inline box edge was crossed since the last text */
    bool flat;              /* a table cell: every break is a space */
    char prefix[PREFIX_MAX];
    size_t prefix_len;
    char marker[24];        /* list marker or heading hashes, written before the next text */
    size_t marker_prefix;   /* how much of prefix the marker's own line takes */
    uint32_t last_cp;
    bool line_start;
    unsigned in_link;
    unsigned in_heading;
    char **links;
    size_t n_links;
    const char *base;
} emitter;

void em_put(emitter *e, const char *s, size_t n);
void em_puts(emitter *e, const char *s);
size_t em_utf8_decode(const unsigned char *p, uint32_t *cp);
size_t em_utf8_encode(uint32_t cp, char *u);
bool em_invisible(uint32_t cp);
bool em_is_blank(uint32_t cp);
bool em_md_special(uint32_t cp);
/* Writes what is pending (separator, prefix, marker) before next_cp. */
void em_flush(emitter *e, uint32_t next_cp);
/* Asks for at least this separation (PEND_*) before the next text. */
void em_want(emitter *e, int level);
void em_text(emitter *e, const unsigned char *s);
void em_raw_text(emitter *e, const unsigned char *s, size_t n);

/* The recursive renderer (render.c) and tables (render_table.c). */
void vf_render_node(emitter *e, vf_node *n);
void vf_render_children(emitter *e, vf_node *el);
void vf_render_table(emitter *e, vf_node *table);

#endif
