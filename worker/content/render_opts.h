/* How a tree is rendered: Markdown or text, the link style, the base URL
 * links resolve against and an output cap. Shared by render.h and the
 * emitter, so neither has to include the other. */
#ifndef VERIFETCH_WORKER_RENDER_OPTS_H
#define VERIFETCH_WORKER_RENDER_OPTS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { VF_LINKS_INLINE = 0, VF_LINKS_NONE, VF_LINKS_LIST } vf_links_style;

typedef struct {
    bool markdown;
    vf_links_style links;
    const char *base_url;   /* absolute URL links and images resolve against; NULL = keep as is */
    size_t max_out;         /* bytes */
    /* Non-NULL: a large page's output goes into a mapping of huge pages
     * (page_map.h) and its length is stored here (0: malloc'd). */
    size_t *out_map_len;
    /* Hears of each text node before it is read, in tree order (may be
     * NULL): text before it is never read again. False: it is gone, skip. */
    bool (*text_reached)(void *ctx, const char *text);
    void *text_ctx;
} vf_render_opts;

#endif
