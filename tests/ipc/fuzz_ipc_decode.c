/* libFuzzer target: both decoders on arbitrary bytes. Every decoded message
 * must re-encode (the encoder accepts whatever the decoder accepts). */
#include <stdint.h>
#include <stdlib.h>

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
    if (vf_result_decode(data, size, 4096, &res, &field) == VF_IPC_OK) {
        if (res.text[res.text_len] != '\0' || vf_result_encode(&res, &buf, &len) != VF_IPC_OK)
            abort();
        free(buf);
        vf_result_free(&res);
    }
    return 0;
}
