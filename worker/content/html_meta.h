/* Page metadata read from the tree before pruning: title, first heading,
 * language, canonical URL, description, publication date (meta, JSON-LD or
 * <time>). Every string is collapsed, valid UTF-8 and cut to its IPC cap. */
#ifndef VERIFETCH_WORKER_HTML_META_H
#define VERIFETCH_WORKER_HTML_META_H

#include <stdbool.h>

#include "worker/content/dom_tree.h"

#include "ipc/ipc_page_meta.h"

/* Fills the string fields it finds (others stay NULL); base_url resolves the
 * canonical link. False only when out of memory. */
bool vf_html_meta_read(vf_dom *doc, const char *base_url, vf_page_meta *m);

/* The <base href> of doc resolved against page_url (malloc'd), or a copy of
 * page_url; NULL when page_url is NULL or out of memory. */
char *vf_html_base_url(vf_dom *doc, const char *page_url);

#endif
