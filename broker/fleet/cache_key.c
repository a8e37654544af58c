#include "broker/fleet/cache_key.h"

#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void lower(char *s)
{
    for (; s && *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

char *vf_cache_normalize_url(const char *url)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *query = NULL, *out = NULL;
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        goto done;
    curl_url_get(u, CURLUPART_PORT, &port, CURLU_NO_DEFAULT_PORT);
    curl_url_get(u, CURLUPART_PATH, &path, 0);
    curl_url_get(u, CURLUPART_QUERY, &query, 0);
    lower(scheme);
    lower(host);
    size_t n = strlen(scheme) + strlen(host) + (port ? strlen(port) : 0) + (path ? strlen(path) : 0) +
               (query ? strlen(query) : 0) + 16;
    out = malloc(n);
    if (out)
        snprintf(out, n, "%s://%s%s%s%s%s%s", scheme, host, port ? ":" : "", port ? port : "",
                 path && path[0] ? path : "/", query ? "?" : "", query ? query : "");
done:
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(query);
    curl_url_cleanup(u);
    return out;
}

int vf_cache_url_host(const char *url, char *buf, size_t len)
{
    CURLU *u = curl_url();
    char *host = NULL;
    int rc = -1;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        size_t n = strlen(host);
        const char *h = host;
        if (n >= 2 && h[0] == '[') {
            h++;
            n -= 2;
        }
        if (n > 0 && n < len) {
            memcpy(buf, h, n);
            buf[n] = '\0';
            if (buf[n - 1] == '.')
                buf[n - 1] = '\0';   /* "example.com." is example.com */
            lower(buf);
            rc = 0;
        }
    }
    curl_free(host);
    curl_url_cleanup(u);
    return rc;
}

int vf_cache_key(char out[VF_FLEET_KEY_MAX], const char *prefix, const char *tenant, const char *url,
                 const char *options)
{
    char *norm = vf_cache_normalize_url(url);
    if (!norm)
        return -1;
    const char *parts[3] = { tenant, norm, options ? options : "{}" };
    vf_fleet_key(out, prefix, "l", parts, 3, NULL);
    free(norm);
    return 0;
}
