/* libmicrohttpd's own error messages, made safe for a log: MHD quotes the
 * request URI verbatim (ESC, CR, JSON-looking text, before any auth), so
 * every message is reduced to printable ASCII (\xNN for anything else) and
 * written as one JSON line {"event":"http_server","detail":...}, rate-limited
 * like every refusal (broker/log_limit.h). */
#ifndef VERIFETCH_HTTP_LOG_H
#define VERIFETCH_HTTP_LOG_H

#include <stdarg.h>
#include <stddef.h>

#define VF_HTTP_LOG_MAX 512u   /* bytes of one message kept before escaping */

/* MHD_OPTION_EXTERNAL_LOGGER callback; cls is unused. */
void vf_http_log(void *cls, const char *fmt, va_list ap);

/* The escaping, exposed for tests: writes a NUL-terminated printable-ASCII
 * form of in[0..len) into out (truncated to outlen). */
void vf_http_log_escape(const char *in, size_t len, char *out, size_t outlen);

#endif
