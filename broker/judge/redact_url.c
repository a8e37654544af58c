/* URL-aware redaction. Unlike the text patterns, which must guess where a
 * value ends inside prose, a URL has structure: the authority ends at the
 * first '/', '?' or '#', and a parameter value runs to the next '&', ';' or
 * '#'. Values are replaced whole; nothing else is normalised, so the result
 * is the input byte for byte apart from the replacements. Parameters in the
 * fragment count too (OAuth implicit flow puts access_token there). */
#include "broker/judge/redact_url.h"

#include <stdbool.h>
#include <string.h>

#include "broker/judge/redact_keys.h"
#include "policy/hex_digit.h"

static bool is_alpha(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_scheme_char(unsigned char c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

/* "%74oken" is "token" to a server, so compare the percent-decoded name. */
static bool key_is_sensitive(const unsigned char *k, size_t n)
{
    char dec[64];
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (o == sizeof dec)
            return false; /* longer than any listed name */
        int hi = n - i >= 3 ? vf_hex_digit(k[i + 1]) : -1, lo = n - i >= 3 ? vf_hex_digit(k[i + 2]) : -1;
        if (k[i] == '%' && hi >= 0 && lo >= 0) {
            dec[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            dec[o++] = (char)k[i];
        }
    }
    return vf_redact_key_is_sensitive(dec, o);
}

/* Offset where the authority starts, or 0 when the URL has none. */
static size_t authority_start(const unsigned char *u, size_t len)
{
    if (len >= 2 && u[0] == '/' && u[1] == '/')
        return 2;
    if (len == 0 || !is_alpha(u[0]))
        return 0;
    size_t p = 1;
    while (p < len && is_scheme_char(u[p]))
        p++;
    if (len - p >= 3 && memcmp(u + p, "://", 3) == 0)
        return p + 3;
    return 0;
}

void vf_url_scrub(const char *url, size_t len, vf_rbuf *out)
{
    const unsigned char *u = (const unsigned char *)url;
    size_t emitted = 0, pos = 0;
    size_t auth = authority_start(u, len);
    if (auth) {
        size_t end = auth;
        while (end < len && u[end] != '/' && u[end] != '?' && u[end] != '#')
            end++;
        /* The last '@' ends the userinfo: passwords may contain a raw '@'. */
        const unsigned char *at = memrchr(u + auth, '@', end - auth);
        if (at && at > u + auth) {
            vf_rbuf_put(out, u, auth);
            vf_rbuf_put_redacted(out);
            emitted = (size_t)(at - u);
        }
        pos = end;
    }
    while (pos < len && u[pos] != '?' && u[pos] != '#')
        pos++;
    /* pos is at the '?' or '#' that starts the parameters (or at the end). */
    while (pos < len) {
        size_t k = pos + 1, p = k;
        while (p < len && u[p] != '&' && u[p] != ';' && u[p] != '#' && u[p] != '?')
            p++;
        const unsigned char *eq = memchr(u + k, '=', p - k);
        if (eq && (size_t)(eq - u) + 1 < p && key_is_sensitive(u + k, (size_t)(eq - u) - k)) {
            size_t v = (size_t)(eq - u) + 1;
            vf_rbuf_put(out, u + emitted, v - emitted);
            vf_rbuf_put_redacted(out);
            emitted = p;
        }
        pos = p;
    }
    vf_rbuf_put(out, u + emitted, len - emitted);
}
