/* The worker's page metadata seen as wall evidence (a view, no copies). */
#ifndef VERIFETCH_PAGE_EVIDENCE_H
#define VERIFETCH_PAGE_EVIDENCE_H

#include "broker/judge/wall_judge.h"
#include "ipc/ipc_page_meta.h"

/* Fills *ev from meta and returns ev, or NULL when meta is NULL. */
const vf_page_evidence *vf_page_evidence_from_meta(const vf_page_meta *meta, vf_page_evidence *ev);

#endif
