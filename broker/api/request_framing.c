#include "broker/api/request_framing.h"

#include <strings.h>

typedef struct {
    unsigned content_length;
    unsigned transfer_encoding;
} framing_count;

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    (void)value;
    framing_count *n = cls;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
        n->content_length++;
    else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0)
        n->transfer_encoding++;
    return MHD_YES;
}

const char *vf_request_framing_problem(struct MHD_Connection *c)
{
    framing_count n = { 0, 0 };
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &n);
    if (n.content_length > 1)
        return "more than one Content-Length header";
    if (n.transfer_encoding > 1)
        return "more than one Transfer-Encoding header";
    if (n.content_length && n.transfer_encoding)
        return "both Content-Length and Transfer-Encoding";
    return NULL;
}
