#include "broker/lookup/provider_request.h"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

/* The target with the key as a query parameter, when the config says so. */
static char *target_with_key(const vf_provider_config *pc, const char *target)
{
    if (!pc->cred_query)
        return strdup(target);
    char *enc = curl_easy_escape(NULL, pc->secret, 0);
    if (!enc)
        return NULL;
    char *out = NULL;
    const char *sep = strchr(target, '?') ? "&" : "?";
    if (asprintf(&out, "%s%s%s=%s", target, sep, pc->cred_query, enc) < 0)
        out = NULL;
    explicit_bzero(enc, strlen(enc));
    curl_free(enc);
    return out;
}

/* "Authorization: Basic <base64 of user:password>" (RFC 7617). */
static char *basic_line(const vf_provider_config *pc)
{
    size_t len = strlen(pc->basic_pair);
    char *b64 = malloc(4 * ((len + 2) / 3) + 1);
    char *line = NULL;
    if (b64) {
        EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)pc->basic_pair, (int)len);
        if (asprintf(&line, "Authorization: Basic %s\r\n", b64) < 0)
            line = NULL;
        wipe_free(b64);
    }
    return line;
}

static char *credential_line(const vf_provider_config *pc)
{
    if (pc->basic_pair)
        return basic_line(pc);
    if (!pc->cred_header)
        return strdup("");
    const char *fmt = pc->cred_format ? pc->cred_format : "{key}";
    const char *at = strstr(fmt, "{key}");
    char *line = NULL;
    if (at && asprintf(&line, "%s: %.*s%s%s\r\n", pc->cred_header, (int)(at - fmt), fmt, pc->secret,
                       at + 5) < 0)
        line = NULL;
    return line;
}

/* The configured static headers, each ended by CRLF; *has_accept when one is Accept. */
static char *static_headers(const vf_provider_config *pc, int *has_accept)
{
    size_t len = 1;
    *has_accept = 0;
    for (size_t i = 0; i < pc->n_headers; i++) {
        len += strlen(pc->headers[i]) + 2;
        if (strncasecmp(pc->headers[i], "Accept:", 7) == 0)
            *has_accept = 1;
    }
    char *out = malloc(len), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < pc->n_headers; i++)
        o += sprintf(o, "%s\r\n", pc->headers[i]);
    *o = '\0';
    return out;
}

char *vf_provider_request(const vf_provider_config *pc, const char *target, const char *host_header,
                          const char *body)
{
    char *full_target = target_with_key(pc, target);
    char *cred = credential_line(pc);
    int has_accept = 0;
    char *extra = static_headers(pc, &has_accept);
    char framing[96] = "";
    if (body)
        snprintf(framing, sizeof framing, "Content-Type: application/json\r\nContent-Length: %zu\r\n",
                 strlen(body));
    char *req = NULL;
    if (full_target && cred && extra &&
        asprintf(&req,
                 "%s %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: verifetch/%s\r\n%s"
                 "Accept-Encoding: identity\r\nConnection: close\r\n%s%s%s\r\n%s",
                 body ? "POST" : "GET", full_target, host_header, VERIFETCH_VERSION,
                 has_accept ? "" : "Accept: */*\r\n", extra, cred, framing, body ? body : "") < 0)
        req = NULL;
    /* The key was in these buffers. */
    wipe_free(full_target);
    wipe_free(cred);
    free(extra);
    return req;
}
