/* The model-facing lookup request: parsed strictly, because a model fills it in. */
#ifndef VERIFETCH_REQUEST_H
#define VERIFETCH_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VF_MAX_REQUEST_BODY   (64u * 1024u)
#define VF_MAX_MUST_CONTAIN   1024u
#define VF_DEFAULT_MIN_CHARS  40u
#define VF_MAX_MIN_CHARS      1000000u
#define VF_DEFAULT_MAX_CHARS  20000u
#define VF_MAX_MAX_CHARS      1000000u
#define VF_MAX_START_INDEX    1000000000u
#define VF_MAX_MAX_AGE_S      31536000u

typedef struct {
    char *url;
    char *must_contain;      /* NULL = no requirement */
    bool must_contain_exact; /* "must_contain_mode": "exact" (bytes) or "folded" (default) */
    unsigned min_chars;
    bool has_max_attempts;   /* absent = the tenant ceiling */
    int max_attempts;        /* as given; clamped by the lookup */
    uint32_t render;         /* VF_RENDER_* from "format", "extract", "links" */
    size_t max_chars;        /* characters per page of text (pagination) */
    size_t start_index;      /* first character of this page */
    bool has_max_age;        /* "max_age_s": a cached result must be at most this old */
    unsigned max_age_s;      /* 0 = do not read the cache */
    char *options_key;       /* every field but url and max_age_s, canonical JSON: part of the cache key */
    struct vf_cancel *cancel; /* not from the body: set by the server, NULL = never cancelled */
} vf_lookup_request;

typedef struct {
    char field[72];          /* offending field name, "" for the body as a whole */
    char message[256];
} vf_request_error;

/* 0 on success; -1 with err filled (field + message) on bad input. */
int vf_request_parse(const char *body, size_t len, vf_lookup_request *out, vf_request_error *err);
void vf_request_free(vf_lookup_request *req);

#endif
