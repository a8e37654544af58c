#include "broker/judge/page_evidence.h"

#include <string.h>

const vf_page_evidence *vf_page_evidence_from_meta(const vf_page_meta *meta, vf_page_evidence *ev)
{
    if (!meta)
        return NULL;
    memset(ev, 0, sizeof *ev);
    ev->title = meta->title;
    ev->h1 = meta->h1;
    ev->page_chars = (size_t)meta->page_chars;
    ev->password_field = meta->password_field;
    ev->signals = (const char *const *)meta->signals;
    ev->n_signals = meta->n_signals;
    return ev;
}
