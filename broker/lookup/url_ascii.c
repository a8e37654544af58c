#include "broker/lookup/url_ascii.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "policy/host_idna.h"

/* curl hands the host back percent-decoded, so "b%C3%BCcher.test" is seen
 * as the name it spells. Only a host that changes is written back. */
static const char *ascii_host(CURLU *u, bool *changed)
{
    *changed = false;
    char *host = NULL;
    if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        return "URL has no host";
    char *ascii = NULL;
    const char *why = vf_host_to_ascii(host, &ascii);
    if (!why && strcmp(ascii, host) != 0) {
        if (curl_url_set(u, CURLUPART_HOST, ascii, 0) != CURLUE_OK)
            why = "host has no valid ASCII form";
        else
            *changed = true;
    }
    curl_free(host);
    free(ascii);
    return why;
}

const char *vf_urlu_ascii_host(CURLU *u)
{
    bool changed;
    return ascii_host(u, &changed);
}

char *vf_url_ascii(const char *url, const char **why)
{
    CURLU *u = curl_url();
    char *out = NULL;
    *why = NULL;
    if (!u) {
        *why = "out of memory";
        return NULL;
    }
    bool changed = false;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
        out = strdup(url); /* left to the fetch, which reports it in the receipt */
        if (!out)
            *why = "out of memory";
    } else if (!(*why = ascii_host(u, &changed))) {
        char *text = NULL;
        if (!changed)
            out = strdup(url);
        else if (curl_url_get(u, CURLUPART_URL, &text, 0) == CURLUE_OK)
            out = strdup(text);
        curl_free(text);
        if (!out)
            *why = "out of memory";
    }
    curl_url_cleanup(u);
    return out;
}
