/* What the worker learned about a page besides its text: title, language,
 * canonical URL, dates, charset, which extraction was used, sizes, and the
 * wall fingerprints the verdict stage weighs. Travels inside the worker result
 * as the optional msgpack map "meta"; decoded with the strictness of the rest
 * of ipc/ (unknown and repeated keys refused, types checked, every string
 * capped, valid UTF-8, no NUL). */
#ifndef VERIFETCH_IPC_PAGE_META_H
#define VERIFETCH_IPC_PAGE_META_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc_frame.h"

/* Caps in bytes. Page-controlled strings are cut by the worker to fit. */
#define VF_META_MAX_TITLE       1024u   /* title, h1 */
#define VF_META_MAX_DESCRIPTION 2048u
#define VF_META_MAX_URL         8192u   /* canonical_url */
#define VF_META_MAX_TOKEN       64u     /* lang, published, charset, each signal */
#define VF_META_MAX_SIGNALS     32u

typedef struct {
    char *title; char *h1;            /* page title; text of the first h1/h2 heading */
    char *lang; char *canonical_url; char *description;
    char *published;                  /* ISO 8601 when the page states it, else NULL */
    char *charset;                    /* as detected */
    char *extract;                    /* "main" or "page": what was actually used */
    uint64_t page_chars;              /* code points of the pruned whole-page text */
    uint64_t main_chars;              /* code points of the main-content text */
    bool password_field;              /* the main content (or a form in it) holds <input type=password> */
    char **signals; size_t n_signals; /* wall fingerprints as short ASCII tokens (<= 32 entries, each
                                         <= 64 bytes), filled by worker/content/wall_signals.c */
} vf_page_meta;

/* The worker could not decode the page's declared charset; the result's
 * detail names it ("unsupported charset 'X'") and the text is empty. */
#define VF_SIGNAL_UNSUPPORTED_CHARSET "unsupported_charset"

/* Does m carry this signal? */
bool vf_page_meta_has_signal(const vf_page_meta *m, const char *token);

/* VF_IPC_OK when every field obeys its cap and rule (the encoder refuses
 * anything the decoder would). */
vf_ipc_err vf_page_meta_check(const vf_page_meta *m);

/* Packs m as one msgpack map (NULL strings and empty signals are omitted). */
vf_ipc_err vf_page_meta_pack(msgpack_packer *pk, const vf_page_meta *m);

/* Decodes one msgpack map into a new *out (caller frees with vf_page_meta_destroy).
 * On error *out is NULL and *field names the offending key ("" if none). */
vf_ipc_err vf_page_meta_unpack(const msgpack_object *o, vf_page_meta **out, const char **field);

/* Frees the strings of m and zeroes it (m itself stays). */
void vf_page_meta_clear(vf_page_meta *m);
/* Clears and frees a heap vf_page_meta; NULL is fine. */
void vf_page_meta_destroy(vf_page_meta *m);

/* Appends a signal token (copied); false when full, invalid or out of memory. */
bool vf_page_meta_add_signal(vf_page_meta *m, const char *token);

#endif
