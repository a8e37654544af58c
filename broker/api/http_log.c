#include "broker/api/http_log.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;
static time_t budget_second;
static unsigned budget_used, budget_dropped;

/* A flood of bad requests must not become a flood of log lines. */
static bool take_budget(unsigned *dropped_before)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&budget_lock);
    *dropped_before = 0;
    if (now.tv_sec != budget_second) {
        budget_second = now.tv_sec;
        budget_used = 0;
        *dropped_before = budget_dropped;
        budget_dropped = 0;
    }
    bool ok = budget_used < VF_HTTP_LOG_PER_SEC;
    if (ok)
        budget_used++;
    else
        budget_dropped++;
    pthread_mutex_unlock(&budget_lock);
    return ok;
}

void vf_http_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    unsigned dropped = 0;
    if (!take_budget(&dropped))
        return;
    if (dropped) {
        char note[64];
        snprintf(note, sizeof note, "%u more messages suppressed", dropped);
        vf_request_log(stderr, "", "http_server", note);
    }
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
