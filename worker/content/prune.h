/* Removes what a reader never sees or never came for, before any scoring:
 * script-like elements, page chrome (nav, header, footer, aside, forms,
 * buttons, dialogs), elements hidden by attribute or inline style, landmark
 * roles that are not content, and cookie/consent banners. */
#ifndef VERIFETCH_WORKER_PRUNE_H
#define VERIFETCH_WORKER_PRUNE_H

#include <stdbool.h>
#include <stddef.h>

#include "worker/content/dom_tree.h"

/* Password inputs survive pruning as "anchors": the input itself, or the
 * nearest kept ancestor of a pruned form that held one. */
#define VF_PRUNE_MAX_ANCHORS 16

typedef struct {
    vf_node *password_anchor[VF_PRUNE_MAX_ANCHORS];
    size_t n_password;
} vf_prune_report;

void vf_prune(vf_node *root, vf_prune_report *rep);

/* Is el hidden by the hidden attribute, aria-hidden=true or an inline
 * display:none / visibility:hidden? */
bool vf_prune_is_hidden(const vf_node *el);

#endif
