/* Usability judgement of one fetched page: the seed's crude but explicit test
 * (2xx, text-like type, length, required substring, no interstitial wall). */
#ifndef VERIFETCH_CLASSIFY_H
#define VERIFETCH_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    VF_OUTCOME_OK = 0,
    VF_OUTCOME_TRANSPORT_ERROR,
    VF_OUTCOME_HTTP_ERROR,
    VF_OUTCOME_UNUSABLE_CONTENT,
    VF_OUTCOME_MALFORMED_RESPONSE,
} vf_outcome;

/* "ok", "transport_error", "http_error", "unusable_content", "malformed_response" */
const char *vf_outcome_name(vf_outcome outcome);

typedef struct vf_classifier vf_classifier;

/* markers: PCRE2 patterns (caseless, UTF) for interstitial walls; NULL/0 means the
 * built-in list (vf_default_interstitial_markers). Returns NULL with err on a bad pattern. */
vf_classifier *vf_classifier_new(const char *const *markers, size_t n_markers,
                                 char *err, size_t errlen);
void vf_classifier_free(vf_classifier *c);

/* NULL-terminated built-in marker list: "just a moment", "enable javascript and cookies",
 * captcha, "access denied", "attention required", "verify you are human", ... */
extern const char *const vf_default_interstitial_markers[];

typedef struct {
    int http_status;            /* final status after redirects */
    const char *content_type;   /* may be NULL */
    const char *text;           /* readable text (already extracted by the worker), valid UTF-8 */
    size_t text_len;
    const char *must_contain;   /* NULL = no requirement; matched case-sensitively as a literal */
    unsigned min_chars;
} vf_classify_input;

/* Writes a short detail ("usable content", "HTTP 404", "interstitial page detected
 * ('just a moment')", "content too short (12 < 40 characters)", "required text not found",
 * "content type 'image/png' is not text") and the character count (UTF-8 code points). */
vf_outcome vf_classify(const vf_classifier *c, const vf_classify_input *in,
                       char *detail, size_t detail_len, size_t *content_chars);

/* True for text/..., application/json, application/xml, application/xhtml+xml,
 * application/(anything)+json and +xml (parameters and case ignored). */
bool vf_content_type_is_text(const char *content_type);

#endif
