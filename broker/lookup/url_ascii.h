/* URLs whose host is the one ASCII spelling of policy/host_idna.h: the
 * request's URL is rewritten once on arrival and every redirect target once
 * it is resolved, before any rule, resolver or worker sees the host. */
#ifndef VERIFETCH_URL_ASCII_H
#define VERIFETCH_URL_ASCII_H

#include <curl/curl.h>

/* Replaces u's host with its ASCII form. NULL on success, else a reason. */
const char *vf_urlu_ascii_host(CURLU *u);

/* malloc'd URL with an ASCII host (the same text when it already had one,
 * or when libcurl cannot parse it: the fetch reports that); NULL with *why
 * set when the host has no valid ASCII form. */
char *vf_url_ascii(const char *url, const char **why);

#endif
