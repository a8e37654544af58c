/* What class and id names say about a block, for the main-content scorer:
 * word lists in the spirit of Readability and trafilatura, matched as
 * substrings of the lowercased class and id. */
#ifndef VERIFETCH_WORKER_CONTENT_HINTS_H
#define VERIFETCH_WORKER_CONTENT_HINTS_H

#include <stdbool.h>

#include "worker/content/dom_tree.h"

/* +25 per attribute (class, id) naming content, -25 per one naming chrome. */
float vf_hint_class_weight(const vf_node *el);

/* itemprop="articleBody". */
bool vf_hint_article_body(const vf_node *el);

/* Named like page furniture (sidebar, related, share...) and not like content. */
bool vf_hint_unlikely(const vf_node *el);

/* Named like a readers' comment thread and not like content. */
bool vf_hint_comment_thread(const vf_node *el);

/* Named like something beside the article text that is about it, not of
 * it: standfirst, byline, disclosure, author box, sign-up, caption. */
bool vf_hint_beside_text(const vf_node *el);

/* Named like a byline, dateline, timestamp, caption or photo credit. */
bool vf_hint_credit_line(const vf_node *el);

#endif
