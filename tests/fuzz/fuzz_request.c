/* libFuzzer target: the model-facing request parser (broker/request.c).
 * Property: it either accepts (and then every field is within its documented
 * bounds) or refuses with a NUL-terminated message; never crashes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/api/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vf_lookup_request req;
    vf_request_error err;
    if (vf_request_parse((const char *)data, size, &req, &err) == 0) {
        if (!req.url || strlen(req.url) > 8192 ||
            (strncmp(req.url, "http://", 7) != 0 && strncmp(req.url, "https://", 8) != 0 &&
             strncasecmp(req.url, "http", 4) != 0))
            abort();
        if (req.min_chars > VF_MAX_MIN_CHARS)
            abort();
        if (req.must_contain && (strlen(req.must_contain) == 0 || strlen(req.must_contain) > VF_MAX_MUST_CONTAIN))
            abort();
        vf_request_free(&req);
    } else if (memchr(err.message, '\0', sizeof err.message) == NULL ||
               memchr(err.field, '\0', sizeof err.field) == NULL) {
        abort();
    }
    return 0;
}
