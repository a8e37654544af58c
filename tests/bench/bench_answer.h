/* The floor's JSON answer, written the way the broker writes one
 * (broker/api/json_response.c): whole into one buffer when small, otherwise
 * escaped straight from the document into one block at a time, as
 * libmicrohttpd is fed. The bytes go nowhere: there is no connection. */
#ifndef VERIFETCH_BENCH_ANSWER_H
#define VERIFETCH_BENCH_ANSWER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Takes doc. Returns the answer's length (0 when out of memory); *success
 * says whether the answer's status is "success". */
size_t bench_answer_write(json_t *doc, bool *success);

#endif
