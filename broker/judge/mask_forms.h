/* The literal byte strings the credential proxy masks in provider responses:
 * each key raw, percent-encoded (upper and lower hex) and base64 (standard
 * and URL-safe, padded and not, and the cores any base64 text holding the
 * key contains). Built once at broker start. */
#ifndef VERIFETCH_MASK_FORMS_H
#define VERIFETCH_MASK_FORMS_H

#include <stddef.h>

typedef struct {
    char **forms;
    size_t *lens;
    size_t n;
} vf_mask_forms;

int vf_mask_forms_build(vf_mask_forms *m, const char *const *secrets, size_t n_secrets);
void vf_mask_forms_free(vf_mask_forms *m);

#endif
