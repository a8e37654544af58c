/* One provider attempt as the receipt records it, and what a provider hands
 * back before classification. */
#ifndef VERIFETCH_ATTEMPT_H
#define VERIFETCH_ATTEMPT_H

#include <stddef.h>

#include "broker/judge/classify.h"
#include "ipc/ipc_page_meta.h"

#define VF_DETAIL_MAX 512

typedef struct {
    const char *provider;        /* points into the config; outlives the lookup */
    vf_outcome outcome;
    int http_status;             /* 0 = no response (null in JSON) */
    char detail[VF_DETAIL_MAX];  /* unredacted; redacted when the receipt is built */
    vf_wall wall;                /* wall family named in detail, VF_WALL_NONE otherwise */
} vf_attempt_record;

/* What a provider fetch produced. A transport failure or a malformed provider
 * response is final; otherwise the broker classifies text. */
typedef struct {
    vf_outcome forced;           /* VF_OUTCOME_OK = classify; else this outcome with detail */
    char detail[VF_DETAIL_MAX];
    int http_status;
    char *content_type;          /* malloc'd or NULL */
    char *text;                  /* malloc'd valid UTF-8, NUL-terminated, or NULL */
    size_t text_len;
    char *final_url;             /* URL of the last hop, malloc'd or NULL */
    char *cache_control;         /* the response's Cache-Control, malloc'd or NULL (lookup cache) */
    const char *denied_rule;     /* egress rule that refused a hop (static), or NULL */
    unsigned redirects;
    vf_page_meta *meta;          /* what the worker read from an HTML page, or NULL */
    bool local;                  /* the broker's own fault (fd or memory exhaustion,
                                  * cancellation): never held against the provider */
} vf_fetch_outcome;

void vf_fetch_outcome_free(vf_fetch_outcome *f);

#endif
