/* From a fetched body to the text the broker judges: HTML is rendered to
 * readable text, other text types are decoded to UTF-8, JSON mode follows the
 * job's pointer, anything else yields no text (the broker goes by the type). */
#ifndef VERIFETCH_WORKER_EXTRACT_H
#define VERIFETCH_WORKER_EXTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc_messages.h"

typedef enum { VF_KIND_HTML, VF_KIND_TEXT, VF_KIND_OTHER } vf_body_kind;

/* By media type (parameters and case ignored); NULL is VF_KIND_OTHER. */
vf_body_kind vf_body_kind_of(const char *content_type);

typedef struct {
    char *text;           /* NUL-terminated, valid UTF-8, never NULL on success */
    size_t text_len;
    size_t text_map_len;  /* 0: text is malloc'd; else a mapping this long (a large
                           * page's, extract_html.h); vf_extracted_free knows */
    bool malformed;       /* JSON mode: the response had the wrong shape */
    bool ctype_is_plain;  /* JSON mode success: report text/plain; charset=utf-8 */
    char detail[VF_IPC_MAX_DETAIL];
    bool unsupported_charset; /* the page names a charset nothing decodes: detail says which */
    bool has_meta;        /* meta below is filled (HTML; JSON with a title pointer); free
                           * with vf_extracted_free */
    vf_page_meta meta;
} vf_extracted;

/* How an HTML page is rendered: VF_RENDER_* bits of the job, and the URL
 * its links resolve against (NULL keeps them as written). */
typedef struct {
    uint32_t render;
    const char *page_url;
    /* Called (when not NULL) as soon as body is no longer read: once an HTML
     * body is decoded to UTF-8, or parsed where it lies, the caller can give
     * its memory back. */
    void (*body_done)(void *ctx);
    /* Called (when not NULL) while an HTML body that is UTF-8 already is
     * parsed where it lies: bytes before upto are never read again. */
    void (*body_consumed)(void *ctx, size_t upto);
    void *body_ctx;
    const char *title_pointer;  /* JSON mode: where the answer names the page title, or NULL */
    uint32_t field;             /* JSON mode: VF_FIELD_* (what the pointed-to string holds) */
} vf_extract_opts;

/* Returns false only when out of memory. */
bool vf_extract_with(const vf_extract_opts *opts, vf_response_mode mode, const char *json_pointer,
                     int http_status, const char *content_type, const char *body, size_t len,
                     size_t max_text, vf_extracted *out);

/* vf_extract_with default options: Markdown of the main content, links as written. */
bool vf_extract(vf_response_mode mode, const char *json_pointer, int http_status,
                const char *content_type, const char *body, size_t len,
                size_t max_text, vf_extracted *out);

/* Frees text and meta. */
void vf_extracted_free(vf_extracted *ex);

#endif
