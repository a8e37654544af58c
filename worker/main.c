/* verifetch-worker: one fetch, confined. Started by the broker with an empty
 * environment and the IPC socket on fd 3; receives one job plus a connected
 * socket, confines itself, fetches, extracts, answers with one result frame. */
#include <jansson.h>
#include <libxml/parser.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "extract.h"
#include "fetch.h"
#include "ipc/ipc_frame.h"
#include "ipc/ipc_messages.h"
#include "sanitizer.h"
#include "seccomp_filter.h"
#ifdef VF_WORKER_TEST_HOOKS
#include "test_hooks.h"
#endif

/* The broker sends the job right after spawning; waiting longer means it is gone. */
#define JOB_WAIT_MS 30000

#ifdef VF_UNDER_ASAN
/* LeakSanitizer's exit-time scan clones and ptraces, which the filter kills;
 * leaks are checked in the unit tests, which run the same code unconfined.
 * ASan's SIGSEGV handler would symbolize (open files) and die by SIGSYS: let a
 * crash stay a plain SIGSEGV, as in production. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0:handle_segv=0:handle_sigbus=0";
}
#endif

static void send_frame(const void *buf, size_t len)
{
    vf_ipc_send_frame(VF_WORKER_IPC_FD, buf, len, -1);
}

/* An answer that carries no page: transport error code plus a reason. */
static void answer_error(const char *terr, const char *fmt, ...)
{
    char detail[VF_IPC_MAX_DETAIL];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    vf_result res = { .transport_error = (char *)terr, .detail = detail,
                      .text = (uint8_t *)"", .text_len = 0 };
    void *buf;
    size_t len;
    if (vf_result_encode(&res, &buf, &len) == VF_IPC_OK) {
        send_frame(buf, len);
        free(buf);
    }
}

/* Everything that may open a file runs here, before the filter: time zone,
 * OpenSSL config (inside curl_global_init), IDN conversion, libxml2's globals,
 * jansson's hash seed (read from /dev/urandom on first use). */
static int warm_up(char **url, char *err, size_t errlen)
{
    tzset();
    if (vf_fetch_prepare(url, err, errlen) != 0)
        return -1;
    xmlInitParser();
    json_object_seed(0);
    return 0;
}

static int confine(vf_job *job, char *err, size_t errlen)
{
    if (vf_apply_rlimits(job->timeout_ms, job->max_body, err, errlen) != 0 ||
        vf_drop_root(err, errlen) != 0 || warm_up(&job->url, err, errlen) != 0 ||
        vf_set_no_new_privs(err, errlen) != 0 || vf_seccomp_install(err, errlen) != 0)
        return -1;
    return 0;
}

/* Builds and encodes the result of a finished fetch. NULL when the result
 * cannot be encoded (then the caller answers with an internal error). */
static void *build_result(const vf_job *job, vf_fetch_result *fr, size_t *len,
                          char *why, size_t whylen)
{
    vf_result res = { .http_status = fr->status, .content_type = fr->content_type,
                      .location = fr->location, .body_bytes = fr->body.len,
                      .text = (uint8_t *)"", .detail = fr->detail };
    vf_extracted ex = { 0 };
    if (fr->terr) {
        res.transport_error = (char *)fr->terr;
    } else {
        if (!vf_extract(job->mode, job->json_pointer, fr->status, fr->content_type,
                        fr->body.data ? fr->body.data : "", fr->body.len,
                        (size_t)job->max_body, &ex)) {
            snprintf(why, whylen, "out of memory during extraction");
            return NULL;
        }
        res.text = (uint8_t *)ex.text;
        res.text_len = ex.text_len;
        if (ex.malformed) {
            res.malformed = ex.detail;
            res.detail = ex.detail;
        }
        if (ex.ctype_is_plain)
            res.content_type = "text/plain; charset=utf-8";
    }
    /* The body is no longer needed; give its memory back before encoding. */
    vf_tbuf_free(&fr->body);
    void *buf = NULL;
    vf_ipc_err e = vf_result_encode(&res, &buf, len);
    free(ex.text);
    if (e != VF_IPC_OK) {
        snprintf(why, whylen, "result does not encode: %s", vf_ipc_strerror(e));
        return NULL;
    }
    return buf;
}

int main(void)
{
    char err[VF_IPC_MAX_DETAIL] = "";
    /* A dead peer must give EPIPE, not kill us; a file-backed stderr under
     * RLIMIT_FSIZE 0 must give EFBIG, not SIGXFSZ. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);

    if (vf_close_inherited_fds(err, sizeof err) != 0) {
        answer_error("internal", "%s", err);
        return 0;
    }
    void *payload = NULL;
    size_t plen = 0;
    int sock = -1;
    vf_ipc_err e = vf_ipc_recv_frame(VF_WORKER_IPC_FD, VF_IPC_MAX_JOB_FRAME,
                                     vf_now_ms() + JOB_WAIT_MS, &payload, &plen, &sock);
    if (e != VF_IPC_OK) {
        answer_error("internal", "job frame not received: %s", vf_ipc_strerror(e));
        return 0;
    }
    vf_job job;
    const char *field = "";
    e = vf_job_decode(payload, plen, &job, &field);
    free(payload);
    if (e != VF_IPC_OK) {
        if (sock >= 0)
            close(sock);
        answer_error("internal", "job rejected: %s%s%s", vf_ipc_strerror(e),
                     field[0] ? " in " : "", field);
        return 0;
    }
    if (sock < 0) {
        vf_job_free(&job);
        answer_error("internal", "no socket passed with the job");
        return 0;
    }

#ifdef VF_WORKER_TEST_HOOKS
    vf_hook hook;
    if (!vf_hook_parse(job.test_hook, &hook)) {
        answer_error("internal", "unknown test hook '%s'", job.test_hook);
        close(sock);
        vf_job_free(&job);
        return 0;
    }
#else
    if (job.test_hook) {
        answer_error("internal", "test hooks not built");
        close(sock);
        vf_job_free(&job);
        return 0;
    }
#endif

    if (confine(&job, err, sizeof err) != 0) {
        answer_error("internal", "confinement failed: %s", err);
        close(sock);
        vf_job_free(&job);
        return 0;
    }
#ifdef VF_WORKER_TEST_HOOKS
    vf_hook_after_confine(hook);
    if (hook >= VF_HOOK_SOCKET_AFTER_CONFINE && hook <= VF_HOOK_ALLOC_BOMB) {
        answer_error("internal", "test hook '%s' was not stopped", job.test_hook);
        return 1;
    }
#endif

    vf_fetch_result fr;
    vf_fetch(&job, sock, &fr);
    size_t len = 0;
    void *frame = build_result(&job, &fr, &len, err, sizeof err);
    vf_fetch_result_free(&fr);
    if (!frame) {
        answer_error("internal", "%s", err);
    } else {
#ifdef VF_WORKER_TEST_HOOKS
        if (!vf_hook_send(hook, VF_WORKER_IPC_FD, frame, len))
#endif
            send_frame(frame, len);
        free(frame);
    }
#ifdef VF_WORKER_TEST_HOOKS
    vf_hook_after_result(hook);
#endif
    vf_job_free(&job);
    return 0;
}
