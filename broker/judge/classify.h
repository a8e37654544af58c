/* Usability judgement of one fetched page: status, text-like type, wall
 * families (wall_judge.h), main-content length, required text. */
#ifndef VERIFETCH_CLASSIFY_H
#define VERIFETCH_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "broker/judge/wall.h"
#include "broker/judge/wall_judge.h"

typedef enum {
    VF_OUTCOME_OK = 0,
    VF_OUTCOME_TRANSPORT_ERROR,
    VF_OUTCOME_HTTP_ERROR,
    VF_OUTCOME_UNUSABLE_CONTENT,
    VF_OUTCOME_MALFORMED_RESPONSE,
} vf_outcome;

/* "ok", "transport_error", "http_error", "unusable_content", "malformed_response" */
const char *vf_outcome_name(vf_outcome outcome);

/* A usable page shorter than this (code points of main content) is reported
 * with thin: true in the receipt; still a success. */
#define VF_THIN_CHARS 500u

typedef struct vf_classifier vf_classifier;

/* The built-in wall families are always on. extra_markers (classify.extra_markers)
 * ADD PCRE2 patterns (caseless, UTF): "family: pattern" files one under a family
 * ("paywall: members[- ]only"), a bare pattern counts as bot_challenge. An extra
 * marker counts anywhere on a page shorter than 2000 characters and within the
 * first 1000 of a longer one. Returns NULL with err on a bad pattern. */
vf_classifier *vf_classifier_new(const char *const *extra_markers, size_t n_markers,
                                 char *err, size_t errlen);
void vf_classifier_free(vf_classifier *c);

typedef struct {
    int http_status;            /* final status after redirects */
    const char *content_type;   /* may be NULL */
    const char *text;           /* main-content text exactly as the caller will receive it
                                   (redacted), valid UTF-8 */
    size_t text_len;
    const char *must_contain;   /* NULL = no requirement */
    unsigned min_chars;         /* applies to the main content */
    const vf_page_evidence *page; /* NULL = no page metadata (non-HTML, keyed providers) */
    unsigned disabled_walls;    /* VF_WALL_BIT()s switched off for this tenant */
    bool must_contain_exact;    /* true: byte match; false: folded (text_fold.h) */
} vf_classify_input;

#define VF_CLASSIFY_DETAIL_MAX 512

typedef struct {
    vf_outcome outcome;
    vf_wall wall;               /* family named in the detail, VF_WALL_NONE otherwise */
    bool thin;                  /* ok and shorter than VF_THIN_CHARS */
    size_t content_chars;       /* code points of text */
    char detail[VF_CLASSIFY_DETAIL_MAX];
} vf_verdict;

/* Full verdict. Details: "usable content", "HTTP 404", "HTTP 403; wall bot_challenge:
 * signal hdr:cf-mitigated=challenge", "wall soft_404: title 'page not found' ...",
 * "wall too_short: 12 < 40 characters of main content", "required text not found",
 * "content type 'image/png' is not text". */
void vf_classify_verdict(const vf_classifier *c, const vf_classify_input *in, vf_verdict *out);

/* The outcome of vf_classify_verdict, its detail copied into detail (bounded)
 * and its character count into *content_chars (either may be NULL). */
vf_outcome vf_classify(const vf_classifier *c, const vf_classify_input *in,
                       char *detail, size_t detail_len, size_t *content_chars);

/* True for text/..., application/json, application/xml, application/xhtml+xml,
 * application/(anything)+json and +xml (parameters and case ignored). */
bool vf_content_type_is_text(const char *content_type);

#endif
