/* Picks the main content of a pruned page with a density scorer in the
 * spirit of Readability and trafilatura: paragraphs vote for their
 * ancestors by length and punctuation, link-heavy blocks lose, class/id and
 * <article>/<main>/itemprop=articleBody hints weigh in, related siblings
 * join, and link farms inside the pick are cleaned out. */
#ifndef VERIFETCH_WORKER_MAIN_CONTENT_H
#define VERIFETCH_WORKER_MAIN_CONTENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/content/dom_tree.h"

/* Below this many characters no pick convinces: the whole pruned page is used. */
#define VF_MAIN_MIN_CHARS 250

#define VF_MAIN_MAX_PARTS 64

typedef struct {
    struct vf_node_stats *stats;  /* one per element; node->aux - 1 indexes it */
    size_t n_stats;
    size_t stats_mapped;          /* bytes when stats are a mapping of their own, else 0 */
    vf_node *parts[VF_MAIN_MAX_PARTS]; /* the pick: siblings in document order */
    size_t n_parts;
    size_t main_chars;            /* text of the pick after cleaning */
    size_t page_chars;            /* text of the whole pruned body */
    bool settled;                 /* vf_main_pick_settle ran: stats are freed */
} vf_main_pick;

/* Scores body. Returns true with pick->parts filled when a candidate
 * convinces; false means "use the page" (pick->page_chars is still set).
 * Elements cleaned out of the pick are marked so vf_main_skips() says so.
 * Returns false also when out of memory (then nothing is marked). */
bool vf_main_pick_content(vf_node *body, vf_main_pick *pick);

/* Code points of the text under root, blanks collapsed, marked parts left out. */
size_t vf_main_text_chars(vf_node *root);

/* Should the renderer leave el out (cleaned from the pick)? */
bool vf_main_skips(const vf_node *el);

/* Is n inside one of the picked parts? */
bool vf_main_contains(const vf_main_pick *pick, const vf_node *n);

/* Keeps only what the renderer asks (vf_main_skips, vf_main_text_chars)
 * and frees the per-element stats before the text is built: on a dense page
 * they are a tenth of the tree. */
void vf_main_pick_settle(vf_node *body, vf_main_pick *pick);

/* Forgets the marks (clears every node's aux and VF_NODE_SKIPPED) and frees the stats. */
void vf_main_pick_free(vf_node *body, vf_main_pick *pick);

#endif
