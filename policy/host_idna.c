#include "policy/host_idna.h"

#include <idn2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool is_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            return false;
    return true;
}

const char *vf_host_to_ascii(const char *host, char **out)
{
    *out = NULL;
    if (is_ascii(host)) {
        *out = strdup(host);
        return *out ? NULL : "out of memory";
    }
    uint8_t *ascii = NULL;
    int rc = idn2_lookup_u8((const uint8_t *)host, &ascii, IDN2_NONTRANSITIONAL);
    if (rc != IDN2_OK) {
        idn2_free(ascii);
        return rc == IDN2_MALLOC ? "out of memory" : "host is not a valid internationalised domain name (UTS-46)";
    }
    *out = strdup((const char *)ascii);
    idn2_free(ascii);
    if (!*out)
        return "out of memory";
    if (!is_ascii(*out)) { /* never expected from libidn2; refuse rather than trust */
        free(*out);
        *out = NULL;
        return "host has no ASCII form";
    }
    return NULL;
}
