/* Shared pieces of the provider end-to-end tests, on top of tests/e2e's
 * harness: a recording origin (provider_origin.py), key files, canary keys and
 * the encoded forms a leaked key could take. */
#ifndef VERIFETCH_E2E_PROVIDERS_ENV_H
#define VERIFETCH_E2E_PROVIDERS_ENV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "harness.h"

/* Fixtures for every suite here: hx_setup/hx_teardown plus our origins. */
void pe_setup(void);
void pe_teardown(void);

typedef struct {
    pid_t pid;
    int port;
    char log_path[PATH_MAX];   /* REQ/HDR/QRY/NONCE lines, see provider_origin.py */
} pe_origin;

#define PE_NO_CLOSE_NOTIFY 1u   /* TLS: close the connection without close_notify */

/* Start provider_origin.py on 127.0.0.1; tls NULL = plain HTTP. Aborts the test on failure. */
void pe_origin_start(pe_origin *o, const hx_ca *tls, unsigned flags);
/* The origin's log so far (malloc'd, "" when empty). */
char *pe_origin_log(const pe_origin *o);

/* A fresh random key, with bytes that percent-encoding changes. */
void pe_canary_make(char *out, size_t len);
/* Write key + "\n" to tmpdir/<name> with mode 0600; the path goes to path. */
void pe_key_file(const char *name, const char *key, char *path, size_t len);
/* A key file holding a fresh random key (the value is not needed by the test). */
const char *pe_random_key_file(const char *name, char *path, size_t len);

#define PE_MAX_FORMS 8
/* A secret and every form a leak could take: raw, percent-encoded (upper and
 * lower hex), base64 and base64url, each padded and unpadded. */
typedef struct {
    char *form[PE_MAX_FORMS];
    const char *name[PE_MAX_FORMS];
    size_t len[PE_MAX_FORMS];
    size_t n;
} pe_forms;

void pe_forms_build(const char *secret, pe_forms *f);
/* Standard padded base64 of s (malloc'd), written independently of the broker's. */
char *pe_base64(const char *s);
/* The log line of an HTTP Basic header carrying key as the user name with
 * an empty password: "HDR Authorization: Basic <base64 of key:>\n" (malloc'd). */
char *pe_basic_header(const char *key);
void pe_forms_free(pe_forms *f);
/* Name of the first form found in hay[0..len), or NULL. */
const char *pe_forms_find(const pe_forms *f, const char *hay, size_t len);

/* One http_api provider entry (libconfig group) with its own fresh key file.
 * endpoint is everything before "?url={url}"; extra holds further members,
 * e.g. "response = { mode = \"json\"; pointer = \"/a\"; };" (NULL = none).
 * malloc'd. */
char *pe_http_api_provider(const char *name, const char *endpoint, const char *extra);
/* Join up to 4 provider entries with commas (NULLs skipped); malloc'd. */
char *pe_provider_list(const char *a, const char *b, const char *c, const char *d);

/* Lookup against the broker; asserts the HTTP exchange itself worked. */
hx_response pe_lookup(const hx_broker *b, const char *url, const char *extra);

#endif
