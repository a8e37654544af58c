/* RFC 4648 base64 for a provider's answer that carries the page's bytes
 * (response.encoding = "base64"): the standard or URL-safe alphabet,
 * padding optional, line breaks and spaces skipped, '*' (the credential
 * proxy's mask) read as zero bits. */
#ifndef VERIFETCH_WORKER_BASE64_H
#define VERIFETCH_WORKER_BASE64_H

#include <stdbool.h>
#include <stddef.h>

/* Decodes buf[0..len) in place (the output is never longer); *out_len is
 * its length. False when buf is not base64 (a stray character, a lone
 * sextet, or data after padding). */
bool vf_base64_decode_in_place(char *buf, size_t len, size_t *out_len);

#endif
