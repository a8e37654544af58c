/* The JSON body an http_api provider POSTs: a template held as compact JSON
 * text, whose string values may name the target ("{url}", anywhere inside a
 * string) or stand for a typed number ("{timeout_ms}", "{timeout_s}", the whole
 * string). The broker fills it with jansson, so the target is always one JSON
 * string value, escaped by the encoder: it can add no member and change no
 * other value. Object keys are never substituted. */
#ifndef VERIFETCH_PROVIDER_BODY_H
#define VERIFETCH_PROVIDER_BODY_H

#include <stddef.h>

#define VF_BODY_MAX_DEPTH 16

/* Placeholders in string values (keys never count): how many "{url}", and
 * whether a string mentions "{timeout_..." without being exactly one of the
 * typed forms (*misplaced_typed set to 1). -1 when the text is not JSON. */
int vf_body_count_url(const char *template_json, int *misplaced_typed);

/* The body for one attempt, compact JSON, malloc'd (NULL on failure).
 * timeout_ms is what is left of the attempt's deadline. */
char *vf_body_render(const char *template_json, const char *url, unsigned timeout_ms);

#endif
