/* Egress rules for a URL that a keyed provider will fetch on our behalf.
 *
 * The broker never connects to such a target, so there is no resolved
 * address to vet; but the provider is a fetcher inside someone else's
 * network, and "169.254.169.254", "10.0.0.5:8080" or
 * "metadata.google.internal" would be fetched from there. Everything that
 * can be decided from the URL is decided before any provider sees it:
 *  - the port, against the tenant's ports (80/443 by default);
 *  - tenant deny_hosts;
 *  - an IP literal, with exactly the address rules of a direct fetch
 *    (default denials, tenant deny/allow CIDRs, IPv4-embedded IPv6);
 *  - a name only the provider would resolve: names that are internal by
 *    construction (no dot, localhost, .internal, .local, .localdomain,
 *    .home.arpa, .lan, .intranet, .corp) are refused as "internal_name"
 *    unless the tenant's allow_hosts names them. Public names are left to
 *    the provider: it resolves them, not us. */
#ifndef VERIFETCH_EGRESS_TARGET_H
#define VERIFETCH_EGRESS_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "policy/egress.h"

/* host: as in a URL (IPv6 literal with or without brackets); port: the
 * URL's port or its scheme's default. NULL when allowed; else a static rule
 * name, with one line for the receipt in detail. */
const char *vf_egress_check_target(const vf_egress_policy *policy, const char *host, uint16_t port,
                                   char *detail, size_t detail_len);

#endif
