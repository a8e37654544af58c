/* A JSON answer streamed into libmicrohttpd: the document's small parts are
 * written once, and a page's text is escaped straight from the document into
 * the connection's buffer, so no second full copy of it is ever made. */
#ifndef VERIFETCH_JSON_RESPONSE_H
#define VERIFETCH_JSON_RESPONSE_H

#include <jansson.h>
#include <microhttpd.h>
#include <stddef.h>

/* Takes the document (freed with the response, or now on failure). NULL when
 * out of memory. *body_len gets the exact Content-Length. */
struct MHD_Response *vf_json_response(json_t *doc, size_t *body_len);

#endif
