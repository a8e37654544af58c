/* libFuzzer target: the worker's body-to-text stage (HTML via libxml2,
 * charsets, JSON pointer) and the wall fingerprint scan, unconfined.
 * Properties: output is bounded, NUL-terminated and free of NUL bytes; wall
 * tokens are few, short and printable ASCII; never crashes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/content/extract.h"
#include "worker/content/wall_signals.h"

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
    /* Wall fingerprints: bounded token count and length, printable ASCII. */
    vf_wall_signals sig = { .n = 0 };
    vf_wall_signals_scan_html(&sig, (const char *)data, size);
    char value[256];
    size_t vn = size < sizeof value - 1 ? size : sizeof value - 1;
    memcpy(value, data, vn);
    value[vn] = '\0';
    vf_wall_signals_from_header(&sig, "cf-mitigated", value);
    vf_wall_signals_from_header(&sig, "server", value);
    if (sig.n > VF_WALL_SIGNALS_MAX)
        abort();
    for (size_t i = 0; i < sig.n; i++) {
        size_t n = strnlen(sig.tok[i], VF_WALL_SIGNAL_LEN + 1);
        if (n == 0 || n > VF_WALL_SIGNAL_LEN)
            abort();
        for (size_t k = 0; k < n; k++)
            if (sig.tok[i][k] < 0x21 || sig.tok[i][k] > 0x7e)
                abort();
    }
    return 0;
}
