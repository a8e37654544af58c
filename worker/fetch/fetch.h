/* One HTTP(S) exchange with libcurl over a socket the broker already connected. */
#ifndef VERIFETCH_WORKER_FETCH_H
#define VERIFETCH_WORKER_FETCH_H

#include <openssl/x509.h>
#include <stddef.h>

#include "ipc/ipc_messages.h"
#include "worker/content/text_buf.h"
#include "worker/content/wall_signals.h"

/* Total response header bytes accepted (all header lines of the exchange). */
#define VF_FETCH_MAX_HEADER_BYTES (64u * 1024u)

typedef struct {
    const char *terr;          /* static transport error code, NULL on success */
    char detail[VF_IPC_MAX_DETAIL];
    int status;                /* 0 when no status line arrived */
    char *content_type;        /* malloc'd, NULL when absent */
    char *location;            /* malloc'd raw Location of a 3xx, NULL when absent */
    char *cache_control;       /* malloc'd Cache-Control (capped), NULL when absent */
    vf_tbuf body;              /* decoded body, at most job->max_body bytes */
    vf_wall_signals wall;      /* fingerprints from the final response's headers */
} vf_fetch_result;

/* Things libcurl must do while files may still be opened: global init (loads
 * OpenSSL's config), and turning an international host name into punycode
 * (libidn2 reaches iconv). Rewrites *url in place when needed (malloc'd).
 * Returns 0, or -1 with a reason in err. */
int vf_fetch_prepare(char **url, char *err, size_t errlen);

/* Fetches job->url over sock, which is consumed (closed) in all cases. Never
 * follows redirects. TLS trusts ca_store when given (the zygote's parsed CA),
 * else job->ca_pem, else nothing. */
void vf_fetch(const vf_job *job, int sock, X509_STORE *ca_store, vf_fetch_result *out);

void vf_fetch_result_free(vf_fetch_result *r);

#endif
