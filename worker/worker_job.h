/* One job, start to finish: receive it on fd 3 with its socket, confine,
 * fetch, extract, answer with one result frame. Shared by the exec'd worker
 * and by every worker a zygote forks. */
#ifndef VERIFETCH_WORKER_JOB_H
#define VERIFETCH_WORKER_JOB_H

#include <openssl/x509.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    bool from_zygote;     /* uid drop, namespaces and the global warm-up are done */
    uint32_t layers;      /* VF_LAYER_* already applied by the zygote */
    X509_STORE *ca_store; /* the zygote's parsed CA, NULL when it has none */
    const void *bpf;      /* the zygote's seccomp program, NULL when none */
    size_t bpf_len;
    bool wait_forever;    /* a pool worker: its job comes whenever the broker needs it */
    bool preconfined;     /* vf_worker_preconfine() ran: only the job's limits remain */
    bool rehearsed;       /* a pool worker that ran vf_worker_rehearse() after its fork */
    char preconfine_error[200]; /* why it failed, answered to the job */
} vf_worker_ctx;

/* Returns the process exit code. */
int vf_worker_serve(const vf_worker_ctx *ctx);

/* A zygote worker, while it waits: everything that does not depend on the
 * job -- fixed rlimits, Landlock, no_new_privs, capabilities, and ctx->bpf
 * (the VF_SECCOMP_BEFORE_JOB program) -- so the job meets a worker already
 * confined and none of that costs the lookup time. On failure the reason is
 * kept in ctx and given as the answer to the job. */
void vf_worker_preconfine(vf_worker_ctx *ctx);

/* A whole job's code path -- job decode, fetch, HTML extraction, result
 * encode -- over a socketpair with a canned page. In the zygote it finishes
 * every library's lazy set-up once; in a waiting pool worker it faults in
 * the code and memory a real job touches, so the job does not wait for that. */
void vf_worker_rehearse(void);

/* Process-wide set-up that may open files (time zone, OpenSSL config inside
 * curl_global_init, libxml2 globals). A zygote runs it once before forking. */
int vf_worker_warm_up(char *err, size_t errlen);

#endif
