/* The WHATWG Encoding Standard's encodings, their labels, and the ICU
 * converter that decodes each one (NULL: decoded by charset.c itself). */
#ifndef VERIFETCH_WORKER_CHARSET_LABELS_H
#define VERIFETCH_WORKER_CHARSET_LABELS_H

#include <stddef.h>

#include "worker/content/charset_ids.h"

typedef struct {
    vf_charset cs;
    const char *name;      /* WHATWG name, lowercase */
    const char *icu;       /* ICU converter name, or NULL */
    const char *labels;    /* space-separated, lowercase */
} vf_encoding;

extern const vf_encoding vf_encodings[];
extern const size_t vf_n_encodings;

/* Labels that select the "replacement" encoding: never decoded. */
extern const char *const vf_replacement_labels;

#endif
