/* libconfig 1.5 silently wraps integer literals that overflow (3000000000
 * reads back as -1294967296, 4294968320 as 1024), which would turn a typo into
 * a plausible limit. This pass finds such literals before libconfig parses the
 * file. It only needs to know strings, comments, names and numbers apart. */
#include "policy/config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 65535u    /* config_setting_source_line() is an unsigned short */

static bool is_name_start(char c)
{
    return isalpha((unsigned char)c) || c == '*';
}

static bool is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '*';
}

/* Checks one integer literal (digits only, no sign/suffix); returns false if it overflows. */
static bool literal_fits(const char *digits, size_t n, bool hex, bool negative, bool wide)
{
    char buf[72];
    if (n == 0 || n >= sizeof buf)
        return n == 0;
    memcpy(buf, digits, n);
    buf[n] = '\0';
    errno = 0;
    unsigned long long v = strtoull(buf, NULL, hex ? 16 : 10);
    if (errno == ERANGE)
        return false;
    unsigned long long limit;
    if (wide)
        limit = hex ? UINT64_MAX : (negative ? (unsigned long long)INT64_MAX + 1u : INT64_MAX);
    else
        limit = negative ? (unsigned long long)INT32_MAX + 1u : INT32_MAX;
    return v <= limit;
}

int vf_cfg_lexcheck(vf_cfg_ctx *ctx, const char *text, size_t len)
{
    unsigned line = 1;
    size_t i = 0;
    while (i < len) {
        char c = text[i];
        if (c == '\n') {
            if (++line > MAX_LINES)
                return vf_cfg_fail_plain(ctx, "%s: more than %u lines", ctx->path, MAX_LINES);
            i++;
        } else if (c == '"') {
            for (i++; i < len && text[i] != '"'; i++) {
                if (text[i] == '\\' && i + 1 < len)
                    i++;
                if (text[i] == '\n')
                    line++;
            }
            i++;
        } else if (c == '#' || (c == '/' && i + 1 < len && text[i + 1] == '/')) {
            while (i < len && text[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < len && text[i + 1] == '*') {
            for (i += 2; i < len && !(text[i] == '*' && i + 1 < len && text[i + 1] == '/'); i++)
                if (text[i] == '\n')
                    line++;
            i += 2;
        } else if (is_name_start(c)) {
            while (i < len && is_name_char(text[i]))
                i++;
        } else if (isdigit((unsigned char)c) ||
                   ((c == '-' || c == '+') && i + 1 < len && isdigit((unsigned char)text[i + 1]))) {
            bool negative = c == '-';
            size_t start = (c == '-' || c == '+') ? i + 1 : i;
            bool hex = start + 1 < len && text[start] == '0' &&
                       (text[start + 1] == 'x' || text[start + 1] == 'X');
            size_t d = hex ? start + 2 : start;
            size_t end = d;
            while (end < len && (hex ? isxdigit((unsigned char)text[end])
                                     : isdigit((unsigned char)text[end])))
                end++;
            if (!hex && end < len && (text[end] == '.' || text[end] == 'e' || text[end] == 'E')) {
                /* A float: libconfig stores it as a double, nothing wraps. */
                while (end < len && (isdigit((unsigned char)text[end]) || text[end] == '.' ||
                                     text[end] == 'e' || text[end] == 'E' ||
                                     ((text[end] == '-' || text[end] == '+') &&
                                      (text[end - 1] == 'e' || text[end - 1] == 'E'))))
                    end++;
                i = end;
                continue;
            }
            bool wide = end < len && text[end] == 'L';
            if (!literal_fits(text + d, end - d, hex, negative, wide))
                return vf_cfg_fail_plain(ctx, "%s:%u: integer literal %.*s does not fit in %s",
                                         ctx->path, line, (int)(end - i > 40 ? 40 : end - i),
                                         text + i,
                                         wide ? "64 bits" : "32 bits (add an L suffix for 64-bit values)");
            while (end < len && text[end] == 'L')
                end++;
            i = end;
        } else {
            i++;
        }
    }
    return 0;
}
