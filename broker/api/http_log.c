#include "broker/api/http_log.h"

#include <stdio.h>
#include <string.h>

#include "broker/api/lookup_log.h"

void vf_http_log_escape(const char *in, size_t len, char *out, size_t outlen)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < outlen; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[o++] = (char)c;
            continue;
        }
        out[o++] = '\\';
        out[o++] = 'x';
        out[o++] = hex[c >> 4];
        out[o++] = hex[c & 15];
    }
    if (outlen)
        out[o < outlen ? o : outlen - 1] = '\0';
}

void vf_http_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char raw[VF_HTTP_LOG_MAX];
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1;
    while (len && (raw[len - 1] == '\n' || raw[len - 1] == '\r'))
        len--;  /* MHD ends most messages with a newline of its own */
    char safe[VF_HTTP_LOG_MAX * 4 + 1];
    vf_http_log_escape(raw, len, safe, sizeof safe);
    vf_request_log(stderr, "", "http_server", safe);
}
