/* JSON response mode: the provider's body is JSON and the page text is the
 * string an RFC 6901 pointer names. */
#ifndef VERIFETCH_WORKER_JSON_CONTENT_H
#define VERIFETCH_WORKER_JSON_CONTENT_H

#include <stddef.h>

typedef enum {
    VF_JSON_OK = 0,
    VF_JSON_NOT_JSON,    /* body does not parse (jansson bounds nesting at 2048) */
    VF_JSON_BAD_POINTER, /* pointer syntax is not RFC 6901 */
    VF_JSON_NOT_FOUND,
    VF_JSON_WRONG_TYPE,
    VF_JSON_NOMEM,
} vf_json_status;

/* On VF_JSON_OK *text is malloc'd NUL-terminated UTF-8 (NULs dropped, cut at
 * max_out bytes on a character boundary). Otherwise detail gets a short reason
 * such as "json pointer '/x' is a number, not a string". */
vf_json_status vf_json_extract(const char *body, size_t len, const char *pointer,
                               size_t max_out, char **text, size_t *text_len,
                               char *detail, size_t detail_len);

#endif
