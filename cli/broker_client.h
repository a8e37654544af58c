/* The CLI's one way to reach verifetchd: HTTP over its unix socket, with
 * connection failures explained in words ("no such socket", "permission
 * denied") rather than libcurl's view of a TCP port. */
#ifndef VERIFETCH_CLI_BROKER_CLIENT_H
#define VERIFETCH_CLI_BROKER_CLIENT_H

#include <stdatomic.h>
#include <stddef.h>

#define VF_CLI_MAX_RESPONSE (64u * 1024u * 1024u)

typedef struct {
    long http;          /* status code; 0 when no answer arrived */
    char *body;         /* NUL-terminated, may be NULL */
    size_t len;
    char error[512];    /* why no answer arrived */
    int cancelled;      /* the call was abandoned because *cancel became true */
} vf_cli_response;

/* --socket, else $VERIFETCH_SOCKET, else the daemon's default path. Caller frees. */
char *vf_cli_socket_path(const char *flag);

/* GET (body NULL) or POST (JSON body) to path. 0 when an HTTP answer arrived,
 * -1 otherwise (out->error says why). cancel (may be NULL) is polled. */
int vf_cli_request(const char *socket_path, const char *path, const char *body, const atomic_bool *cancel,
                   vf_cli_response *out);
void vf_cli_response_free(vf_cli_response *r);

#endif
