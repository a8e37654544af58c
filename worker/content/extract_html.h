/* HTML -> readable text with libxml2's SAX HTML parser: no tree is built, so a
 * deeply nested page costs neither stack nor a DOM's worth of memory. */
#ifndef VERIFETCH_WORKER_EXTRACT_HTML_H
#define VERIFETCH_WORKER_EXTRACT_HTML_H

#include <stddef.h>

/* Elements nested deeper than this are parsed no further: the text gathered so
 * far is returned. Bounds libxml2's open-element stack and the cost of its
 * end-tag searches through it. */
#define VF_HTML_MAX_DEPTH 1024
/* Parsing stops once the sum of the open-element depth over all parse errors
 * passes this (about 0.1 s of libxml2's stack searches on this machine). */
#define VF_HTML_ERROR_BUDGET 50000000ull

/* utf8 must be valid UTF-8 without NUL (vf_to_utf8 output), so libxml2 never
 * switches encodings or reaches iconv. script/style/noscript/template are
 * dropped, block elements end lines, whitespace runs collapse to one space,
 * entities are decoded. Returns malloc'd NUL-terminated text of at most max_out
 * bytes, or NULL when out of memory. */
char *vf_html_to_text(const char *utf8, size_t len, size_t max_out, size_t *out_len);

#endif
