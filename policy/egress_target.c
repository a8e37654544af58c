#include "policy/egress_target.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool port_allowed(const vf_egress_policy *p, uint16_t port)
{
    if (p->any_port)
        return true;
    if (!p->ports || p->n_ports == 0)
        return port == 80 || port == 443;
    for (size_t i = 0; i < p->n_ports; i++)
        if (p->ports[i] == port)
            return true;
    return false;
}

static bool ends_with_label(const char *host, size_t n, const char *suffix)
{
    size_t s = strlen(suffix);
    return n == s ? strncasecmp(host, suffix, n) == 0
                  : n > s && host[n - s - 1] == '.' && strncasecmp(host + n - s, suffix, s) == 0;
}

/* Names that resolve only inside some private network by construction. */
static bool internal_name(const char *host)
{
    size_t n = strlen(host);
    if (n && host[n - 1] == '.')
        n--;
    if (n == 0 || !memchr(host, '.', n))
        return true; /* single label: "metadata", "intranet", "localhost" */
    static const char *const suffixes[] = {"localhost", "internal", "local", "localdomain", "home.arpa",
                                           "lan", "intranet", "corp", "private", NULL};
    for (const char *const *s = suffixes; *s; s++)
        if (ends_with_label(host, n, *s))
            return true;
    return false;
}

/* Parses an IP literal (brackets optional) into sa; false for a name. */
static bool ip_literal(const char *host, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    char buf[64];
    size_t n = strlen(host);
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
        host++;
        n -= 2;
    }
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, host, n);
    buf[n] = '\0';
    char *zone = strchr(buf, '%'); /* fe80::1%25eth0 */
    if (zone)
        *zone = '\0';
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, buf, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        return true;
    }
    if (inet_pton(AF_INET6, buf, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        return true;
    }
    return false;
}

const char *vf_egress_check_target(const vf_egress_policy *policy, const char *host, uint16_t port,
                                   char *detail, size_t detail_len)
{
    struct sockaddr_storage ss;
    bool literal = ip_literal(host, &ss);
    if (literal) {
        /* The port goes in the address so vf_egress_check judges it too. */
        if (ss.ss_family == AF_INET)
            ((struct sockaddr_in *)&ss)->sin_port = htons(port);
        else
            ((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
        const char *rule = vf_egress_check(policy, (struct sockaddr *)&ss);
        if (rule)
            vf_egress_describe(rule, (struct sockaddr *)&ss, detail, detail_len);
        return rule;
    }
    const char *rule = vf_egress_host_check(policy, host);
    if (rule) {
        vf_egress_describe_host(rule, host, NULL, detail, detail_len);
        return rule;
    }
    if (!port_allowed(policy, port)) {
        snprintf(detail, detail_len, "egress denied: port %u is not allowed for this tenant (rule port)",
                 (unsigned)port);
        return "port";
    }
    if (internal_name(host) && !vf_egress_host_allowed_explicitly(policy, host)) {
        snprintf(detail, detail_len,
                 "egress denied: the target host is an internal name a provider would resolve in its "
                 "own network (rule internal_name)");
        return "internal_name";
    }
    return NULL;
}
