/* Exact-value scrubbing of configured secrets (private to redaction). */
#ifndef VERIFETCH_REDACT_SECRETS_H
#define VERIFETCH_REDACT_SECRETS_H

#include <stddef.h>

#include <stdbool.h>

#include "broker/judge/redact_trigset.h"

/* Longest secret accepted: scanning cost grows with secret length. */
#define VF_SECRET_MAX_LEN 4096

typedef struct vf_secret_set vf_secret_set;

/* NULL and empty entries are skipped. Returns NULL with err on a secret longer
 * than VF_SECRET_MAX_LEN or on allocation failure. */
vf_secret_set *vf_secret_set_new(const char *const *secrets, size_t n_secrets,
                                 char *err, size_t errlen);
void vf_secret_set_free(vf_secret_set *s);
size_t vf_secret_set_count(const vf_secret_set *s);

/* The 3-byte prefixes any secret form can start with. */
const vf_trigset *vf_secret_set_triggers(const vf_secret_set *s);

/* The last base64 run a hit widened over, kept by the caller for one scan
 * of one text: a run holding a hit every few bytes is then walked once, not
 * once per hit (which was quadratic in the run's length). Start a scan with
 * VF_B64_RUN_NONE; positions and floors must not decrease during it. */
typedef struct {
    size_t lo, hi; /* t[lo..hi) is base64; empty when nothing is known */
} vf_b64_run;
#define VF_B64_RUN_NONE ((vf_b64_run){0, 0})

/* Longest secret form at t[i]; [*start, *end) is what to redact (a base64
 * hit widens to its whole run, but not below floor). */
bool vf_secret_match(const vf_secret_set *s, const unsigned char *t, size_t len, size_t i,
                     size_t floor, vf_b64_run *run, size_t *start, size_t *end);

#endif
