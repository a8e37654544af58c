/* Egress host name rules: pattern validation, matching, and the name-only
 * checks. Names are a convenience on top of the address rules in egress.c:
 * a deny by name is bypassable with another name or an IP literal, so the
 * CIDR rules stay the real boundary. */
#include "policy/egress.h"

#include <stdio.h>
#include <string.h>

#define LABEL_MAX 63u

static char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool is_name_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}



/* vf_host_pattern_match lives in policy/ordering.c: one matcher for egress
 * host rules and domain ordering rules. */

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

static bool any_match(char *const *patterns, size_t n, const char *host)
{
    /* No early exit needed: these are policy names, not secrets. */
    for (size_t i = 0; i < n && patterns; i++)
        if (vf_host_pattern_match(patterns[i], host))
            return true;
    return false;
}

const char *vf_egress_host_check(const vf_egress_policy *policy, const char *host)
{
    if (!policy || !host)
        return NULL;
    return any_match(policy->deny_hosts, policy->n_deny_hosts, host) ? "tenant_deny_host" : NULL;
}

bool vf_egress_host_allowed_explicitly(const vf_egress_policy *policy, const char *host)
{
    if (!policy || !host || vf_egress_host_check(policy, host))
        return false;
    return any_match(policy->allow_hosts, policy->n_allow_hosts, host);
}

void vf_egress_describe_host(const char *rule, const char *host, const struct sockaddr *sa,
                             char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    if (!rule || strcmp(rule, "tenant_deny_host") != 0 || !host) {
        vf_egress_describe(rule, sa, buf, len);
        return;
    }
    /* The host comes from a URL an attacker may write: print a safe copy. */
    char safe[VF_HOST_NAME_MAX + 2];
    size_t n = strlen(host);
    if (n > VF_HOST_NAME_MAX + 1)
        n = VF_HOST_NAME_MAX + 1;
    for (size_t i = 0; i < n; i++) {
        char c = ascii_lower(host[i]);
        safe[i] = is_name_byte(c) ? host[i] : '?';
    }
    safe[n] = '\0';
    snprintf(buf, len, "egress denied: host %s is denied for this tenant (rule tenant_deny_host)",
             safe);
}
