#include "broker/fleet/cache_control.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool directive_is(const char *d, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(d, name, n) == 0;
}

/* delta-seconds: digits only, optionally quoted; saturates (RFC 9111 1.2.2). */
static bool delta_seconds(const char *v, size_t n, unsigned *out)
{
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
        v++;
        n -= 2;
    }
    if (n == 0)
        return false;
    unsigned long long x = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)v[i]))
            return false;
        x = x * 10 + (unsigned)(v[i] - '0');
        if (x > 2147483648ull)
            x = 2147483648ull;
    }
    *out = (unsigned)x;
    return true;
}

void vf_cache_control_parse(const char *header, vf_cache_control *out)
{
    memset(out, 0, sizeof *out);
    if (!header)
        return;
    const char *p = header;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *start = p;
        bool quoted = false;
        while (*p && (quoted || *p != ',')) {
            if (*p == '"')
                quoted = !quoted;
            p++;
        }
        size_t len = (size_t)(p - start);
        while (len && (start[len - 1] == ' ' || start[len - 1] == '\t'))
            len--;
        const char *eq = memchr(start, '=', len);
        size_t nlen = eq ? (size_t)(eq - start) : len;
        const char *val = eq ? eq + 1 : NULL;
        size_t vlen = eq ? len - nlen - 1 : 0;
        if (directive_is(start, nlen, "no-store"))
            out->no_store = true;
        else if (directive_is(start, nlen, "no-cache"))
            out->no_cache = true;
        else if (directive_is(start, nlen, "private"))
            out->is_private = true;
        else if (directive_is(start, nlen, "max-age")) {
            if (!val || !delta_seconds(val, vlen, &out->max_age))
                out->malformed = true;
            else
                out->has_max_age = true;
        } else if (directive_is(start, nlen, "s-maxage")) {
            if (!val || !delta_seconds(val, vlen, &out->s_maxage))
                out->malformed = true;
            else
                out->has_s_maxage = true;
        }
    }
}

unsigned vf_cache_control_ttl(const vf_cache_control *cc, unsigned max_ttl_s)
{
    if (cc->no_store || cc->no_cache || cc->is_private || cc->malformed)
        return 0;
    unsigned ttl = max_ttl_s;
    if (cc->has_s_maxage)
        ttl = cc->s_maxage;
    else if (cc->has_max_age)
        ttl = cc->max_age;
    return ttl < max_ttl_s ? ttl : max_ttl_s;
}
