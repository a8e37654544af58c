#include "broker/lookup/attempt.h"

#include <stdlib.h>
#include <string.h>

void vf_fetch_outcome_free(vf_fetch_outcome *f)
{
    free(f->content_type);
    free(f->text);
    free(f->final_url);
    vf_page_meta_destroy(f->meta);
    f->meta = NULL;
    free(f->cache_control);
    f->cache_control = NULL;
    f->content_type = NULL;
    f->text = NULL;
    f->final_url = NULL;
}
