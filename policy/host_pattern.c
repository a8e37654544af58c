/* Host names in policy: normalising a name, the two pattern syntaxes (ordering
 * rules and egress host rules share one matcher) and a printable copy of a
 * name taken from a URL. Depends on nothing else in policy/. */
#include "policy/host_pattern.h"

#include <string.h>
#include <strings.h>

bool vf_host_normalize(const char *host, char *buf, size_t buflen)
{
    if (!host || !buf || buflen < 2)
        return false;
    size_t n = strlen(host);
    if (n > 0 && host[n - 1] == '.')
        n--;
    if (n == 0 || n > VF_HOST_NAME_MAX || n + 1 > buflen)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = host[i];
        buf[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    buf[n] = '\0';
    return true;
}

static bool label_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == ':';
}

bool vf_host_pattern_valid(const char *pattern)
{
    if (!pattern)
        return false;
    if (strcmp(pattern, "*") == 0)
        return true;
    const char *s = strncmp(pattern, "*.", 2) == 0 ? pattern + 2 : pattern;
    size_t n = strlen(s);
    if (n == 0 || n > VF_HOST_NAME_MAX)
        return false;
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            if (label == 0)
                return false;
            label = 0;
        } else if (label_char(s[i])) {
            label++;
        } else {
            return false;   /* includes a second '*' anywhere */
        }
    }
    return label > 0;
}

bool vf_host_pattern_match(const char *pattern, const char *host)
{
    char h[VF_HOST_NAME_MAX + 1];
    if (!vf_host_pattern_valid(pattern) || !vf_host_normalize(host, h, sizeof h))
        return false;
    if (strcmp(pattern, "*") == 0)
        return true;
    if (strncmp(pattern, "*.", 2) != 0)
        return strcasecmp(pattern, h) == 0;
    const char *suffix = pattern + 1;   /* ".example.com" */
    size_t hl = strlen(h), sl = strlen(suffix);
    /* At least one non-empty label in front: the apex and "badexample.com" fail. */
    return hl > sl && h[hl - sl - 1] != '.' && strcasecmp(h + hl - sl, suffix) == 0;
}

/* ---- egress host patterns (config form) ---- */

#define LABEL_MAX 63u

static char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool is_name_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

/* Checks the dotted name in name[0..n): labels of 1..63 name bytes. */
static const char *check_labels(const char *name, size_t n)
{
    size_t label = 0;
    bool all_digits = true;
    for (size_t i = 0; i < n; i++) {
        if (name[i] == '.') {
            if (label == 0)
                return "has an empty label (two dots in a row, or a leading dot)";
            label = 0;
            all_digits = true;
            continue;
        }
        if (++label > LABEL_MAX)
            return "has a label longer than 63 characters";
        if (name[i] < '0' || name[i] > '9')
            all_digits = false;
    }
    if (label == 0)
        return "has an empty label (two dots in a row, or a leading dot)";
    /* A numeric last label is how URL parsers recognise IPv4 ("10.1", "127.0.0.1"). */
    if (all_digits)
        return "looks like an IP address; use the egress allow/deny CIDR lists for addresses";
    return NULL;
}

const char *vf_host_pattern_parse(const char *text, char *out, size_t outlen)
{
    if (!text || !out || outlen < VF_HOST_NAME_MAX + 1)
        return "internal error: no room for the pattern";
    size_t n = strlen(text);
    if (n > 0 && text[n - 1] == '.')
        n--;
    if (n == 0)
        return "must not be empty";
    bool glob = n >= 2 && text[0] == '*' && text[1] == '.';
    size_t start = glob ? 2 : 0;
    if (n - start > VF_HOST_NAME_MAX)
        return "is longer than 253 characters";
    if (n == start)
        return "needs a name after \"*.\"";
    for (size_t i = start; i < n; i++) {
        char c = ascii_lower(text[i]);
        if (c == '*')
            return "may use '*' only as a leading \"*.\" (any subdomain)";
        if (!is_name_byte(c))
            return "may contain only ASCII letters, digits, '-', '_' and '.' (write IDNs in "
                   "their xn-- form)";
    }
    const char *why = check_labels(text + start, n - start);
    if (why)
        return why;
    for (size_t i = 0; i < n; i++)
        out[i] = ascii_lower(text[i]);
    out[n] = '\0';
    return NULL;
}

void vf_host_printable(const char *host, char *out, size_t outlen)
{
    if (!out || outlen == 0)
        return;
    size_t n = host ? strlen(host) : 0;
    if (n > outlen - 1)
        n = outlen - 1;
    for (size_t i = 0; i < n; i++) {
        char c = ascii_lower(host[i]);
        out[i] = is_name_byte(c) ? host[i] : '?';
    }
    out[n] = '\0';
}
