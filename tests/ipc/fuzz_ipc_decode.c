/* libFuzzer target: both decoders on arbitrary bytes. Every decoded message
 * must re-encode (the encoder accepts whatever the decoder accepts). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/ipc_messages.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *field;
    void *buf;
    size_t len;

    vf_job job;
    if (vf_job_decode(data, size, &job, &field) == VF_IPC_OK) {
        if (vf_job_encode(&job, &buf, &len) != VF_IPC_OK)
            abort();
        free(buf);
        vf_job_free(&job);
    }

    vf_result res;
    vf_ipc_err copied = vf_result_decode(data, size, 4096, &res, &field);
    if (copied == VF_IPC_OK) {
        if (res.text[res.text_len] != '\0' || vf_result_encode(&res, &buf, &len) != VF_IPC_OK)
            abort();
        free(buf);
    }

    /* The in-frame decode the broker uses agrees with the copying one. */
    vf_result owned;
    void *frame = malloc(size ? size : 1);
    if (!frame)
        abort();
    memcpy(frame, data, size);
    vf_ipc_err in_frame = vf_result_decode_owned(frame, size, 4096, &owned, &field);
    if (in_frame != copied)
        abort();
    if (in_frame == VF_IPC_OK) {
        if (owned.text_len != res.text_len || memcmp(owned.text, res.text, res.text_len + 1) != 0)
            abort();
        vf_result_free(&owned);
        vf_result_free(&res);
    }
    return 0;
}
