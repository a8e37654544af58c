/* libFuzzer target: the worker's body-to-text stage (HTML via libxml2,
 * charsets, JSON pointer), unconfined. Property: output is bounded, NUL-
 * terminated and free of NUL bytes; never crashes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/content/extract.h"

#define MAX_TEXT (64u * 1024u)

static void run(vf_response_mode mode, const char *ctype, const uint8_t *data, size_t size)
{
    vf_extracted out;
    memset(&out, 0, sizeof out);
    if (!vf_extract(mode, mode == VF_MODE_JSON ? "/data/content" : NULL, 200, ctype, (const char *)data, size,
                    MAX_TEXT, &out))
        return;
    if (!out.text || out.text_len > MAX_TEXT || out.text[out.text_len] != '\0' ||
        memchr(out.text, '\0', out.text_len) != NULL)
        abort();
    vf_extracted_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(VF_MODE_RAW, "text/html; charset=utf-8", data, size);
    run(VF_MODE_RAW, "text/html; charset=windows-1252", data, size);
    run(VF_MODE_RAW, "text/plain; charset=utf-16", data, size);
    run(VF_MODE_JSON, "application/json", data, size);
    return 0;
}
