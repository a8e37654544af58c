/* One ASCII spelling per host name (issue 13 item 13). The broker's rules,
 * resolution, ordering, circuits and the worker's job all see the name this
 * returns, so "bücher.test", "BÜCHER.test" and a fullwidth spelling cannot
 * pass a deny_hosts rule written as "xn--bcher-kva.test" (and "１２７.0.0.1"
 * is the IP literal it stands for). UTS-46 non-transitional mapping, as
 * libcurl uses when it resolves an IDN; no transitional fallback. */
#ifndef VERIFETCH_HOST_IDNA_H
#define VERIFETCH_HOST_IDNA_H

/* NULL with *out a malloc'd ASCII name (a copy when host was ASCII already);
 * else a static reason and *out NULL. */
const char *vf_host_to_ascii(const char *host, char **out);

#endif
