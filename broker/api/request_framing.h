/* Request heads whose body length two parsers could read differently (issue
 * 13 item 15): libmicrohttpd takes the first Content-Length and lets
 * chunking win over it; a proxy in front may take another. Such heads are
 * refused before any body is read. */
#ifndef VERIFETCH_REQUEST_FRAMING_H
#define VERIFETCH_REQUEST_FRAMING_H

#include <microhttpd.h>

/* NULL when the head frames its body one way only; else why not. */
const char *vf_request_framing_problem(struct MHD_Connection *c);

#endif
