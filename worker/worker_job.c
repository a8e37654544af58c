#include "worker_job.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <libxml/parser.h>
#include <malloc.h>
#include <openssl/rand.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "worker/sandbox/broker_userns.h"
#include "worker/sandbox/confine.h"
#include "worker/content/charset.h"
#include "worker/content/extract.h"
#include "worker/fetch/client_ctx.h"
#include "worker/fetch/spki_decoders.h"
#include "worker/fetch/fetch.h"
#include "ipc/ipc_frame.h"
#include "ipc/ipc_messages.h"
#include "worker/sandbox/landlock.h"
#include "worker/sandbox/namespaces.h"
#include "worker/sandbox/job_filter.h"
#include "worker/sandbox/stack_canary.h"
#include "worker/sandbox/seccomp_filter.h"
#ifdef VF_WORKER_TEST_HOOKS
#include "test_hooks.h"
#endif

/* The broker sends the job right after starting us; waiting longer means it is gone. */
#define JOB_WAIT_MS 30000

/* What has been applied so far; every answer reports it. */
static uint32_t applied;
/* An exec'd worker joined the broker's mapped user namespace (fd 4). */
static bool in_broker_userns;

#ifdef VF_WORKER_TEST_HOOKS
static vf_hook hook;
static char hook_note[128];
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
                      .text = (uint8_t *)"", .text_len = 0, .layers = applied };
    void *buf;
    size_t len;
    if (vf_result_encode(&res, &buf, &len) == VF_IPC_OK) {
        send_frame(buf, len);
        free(buf);
    }
}

int vf_worker_warm_up(char *err, size_t errlen)
{
    tzset();
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init failed");
        return -1;
    }
    xmlInitParser();
    /* ICU's converters before confinement: its data is in memory, but its
     * alias table is loaded on first use. */
    if (vf_charset_warm_up(err, errlen) != 0)
        return -1;
    return 0;
}

/* jansson would read /dev/urandom for its hash seed on first use; give it one. */
static void seed_json(void)
{
    uint32_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed || seed == 0)
        seed = (uint32_t)time(NULL) | 1u;
    json_object_seed(seed);
}

/* Landlock needs no_new_privs or CAP_SYS_ADMIN in our user namespace; without
 * a user namespace, set no_new_privs first (it is set right after anyway). */
static int apply_landlock(char *err, size_t errlen)
{
    int r = vf_landlock_forbid_all(err, errlen);
    if (r < 0 && errno == EPERM) {
        if (vf_set_no_new_privs(err, errlen) != 0)
            return -1;
        applied |= VF_LAYER_NNP;
        r = vf_landlock_forbid_all(err, errlen);
    }
    if (r < 0)
        return -1;
    if (r > 0)
        applied |= VF_LAYER_LANDLOCK;
    return 0;
}

/* The broker's program wins; else the zygote's; else compile our own. */
static int apply_seccomp(const vf_job *job, const vf_worker_ctx *ctx, char *err, size_t errlen)
{
    if (job->bpf)
        return vf_seccomp_load(job->bpf, job->bpf_len, err, errlen);
    if (ctx->bpf)
        return vf_seccomp_load(ctx->bpf, ctx->bpf_len, err, errlen);
    void *prog;
    size_t len;
    if (vf_seccomp_export(VF_SECCOMP_AFTER_JOB, &prog, &len, err, errlen) != 0)
        return -1;
    int rc = vf_seccomp_load(prog, len, err, errlen);
    free(prog);
    return rc;
}

/* The job-independent tail of the confinement, DESIGN.md order: Landlock,
 * no new privileges, capabilities, seccomp. With a fetch socket (sock >= 0)
 * the job filter goes in first: the allowlist forbids seccomp() itself. */
static int lock_down(const vf_job *job, const vf_worker_ctx *ctx, int sock, char *err, size_t errlen)
{
    seed_json();
    if (apply_landlock(err, errlen) != 0)
        return -1;
#ifdef VF_WORKER_TEST_HOOKS
    /* A zygote worker does this before its job (and hook) is known, so the
     * test-hook build always probes; the hook only reports it. */
    vf_hook_probe_open(hook_note, sizeof hook_note);
#endif
    if (vf_set_no_new_privs(err, errlen) != 0)
        return -1;
    applied |= VF_LAYER_NNP;
    vf_drop_capabilities();
    if (sock >= 0 && vf_job_filter_load(sock, err, errlen) != 0)
        return -1;
    if (apply_seccomp(job, ctx, err, errlen) != 0)
        return -1;
    applied |= VF_LAYER_SECCOMP;
    return 0;
}

void vf_worker_preconfine(vf_worker_ctx *ctx)
{
    char *err = ctx->preconfine_error;
    size_t errlen = sizeof ctx->preconfine_error;
    static const vf_job no_job;
    applied = ctx->layers;
    err[0] = '\0';
    if (vf_apply_fixed_rlimits(err, errlen) == 0 && lock_down(&no_job, ctx, -1, err, errlen) == 0) {
        ctx->layers = applied;
        ctx->preconfined = true;
    }
}

/* DESIGN.md order: rlimits, uid, namespaces, Landlock, warm-up done, no new
 * privileges, seccomp. The warm-up that opens files (OpenSSL config, iconv
 * modules for IDN) has to precede Landlock, which forbids every open. A
 * zygote worker arrives with all but the job's own limits in place. */
static int confine(vf_job *job, const vf_worker_ctx *ctx, int sock, char *err, size_t errlen)
{
    applied = ctx->layers;
    if (ctx->from_zygote && !ctx->preconfined) {
        snprintf(err, errlen, "%s", ctx->preconfine_error);
        return -1;
    }
    if (!ctx->preconfined && vf_apply_fixed_rlimits(err, errlen) != 0)
        return -1;
    if (vf_apply_job_rlimits(job->timeout_ms, job->max_body, err, errlen) != 0)
        return -1;
    applied |= VF_LAYER_RLIMITS;
    if (!ctx->from_zygote && in_broker_userns) {
        /* 0 in the broker's namespace: the other namespaces first, while we
         * may, then the subordinate uid. */
        applied |= VF_LAYER_USERNS | vf_ns_unshare(false);
        if (vf_broker_userns_drop(err, errlen) != 0)
            return -1;
        applied |= VF_LAYER_UID;
        if (vf_worker_warm_up(err, errlen) != 0)
            return -1;
    } else if (!ctx->from_zygote) {
        if (vf_drop_root(err, errlen) != 0)
            return -1;
        applied |= VF_LAYER_UID;
        applied |= vf_ns_unshare(true);
        if (vf_worker_warm_up(err, errlen) != 0)
            return -1;
    }
    if (vf_fetch_prepare(&job->url, err, errlen) != 0)
        return -1;
    /* A zygote worker stacks the job filter on its pre-job allowlist now. */
    return ctx->preconfined ? vf_job_filter_load(sock, err, errlen) : lock_down(job, ctx, sock, err, errlen);
}

/* An encoded result: the message is head, then the text where the
 * extractor left it, then tail (vf_result_encode_split). */
typedef struct {
    void *head, *tail;
    size_t head_len, tail_len;
    vf_extracted ex; /* owns the text */
    const void *text;
    size_t text_len;
} result_frame;

static void result_frame_free(result_frame *f)
{
    free(f->head);
    free(f->tail);
    vf_extracted_free(&f->ex);
    memset(f, 0, sizeof *f);
}

/* Builds and encodes the result of a finished fetch. False when the result
 * cannot be encoded (then the caller answers with an internal error). */
static bool build_result(const vf_job *job, vf_fetch_result *fr, const char *detail_override,
                         result_frame *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    vf_result res = { .http_status = fr->status, .content_type = fr->content_type,
                      .location = fr->location, .cache_control = fr->cache_control,
                      .body_bytes = fr->body.len,
                      .text = (uint8_t *)"", .detail = fr->detail, .layers = applied };
    vf_extracted *ex = &out->ex;
    if (fr->terr) {
        res.transport_error = (char *)fr->terr;
    } else {
        /* Wall signals read the raw body, which extraction lets go early. */
        vf_wall_signals_scan_html(&fr->wall, fr->body.data, fr->body.len);
        /* A large body (a mapping, fetch.c) parsed where it lies goes back
         * to the kernel as the parser reads it. */
        vf_extract_opts xo = { .render = job->render, .page_url = job->url,
                               .body_done = vf_tbuf_free_cb, .body_consumed = vf_tbuf_release_before_cb,
                               .body_ctx = &fr->body,
                               .title_pointer = job->title_pointer, .field = job->field };
        if (!vf_extract_with(&xo, job->mode, job->json_pointer, fr->status, fr->content_type,
                             fr->body.data ? fr->body.data : "", fr->body.len,
                             (size_t)job->max_body, ex)) {
            vf_extracted_free(ex);
            snprintf(why, whylen, "out of memory during extraction");
            return false;
        }
        res.text = (uint8_t *)ex->text;
        res.text_len = ex->text_len;
        if (ex->malformed) {
            res.malformed = ex->detail;
            res.detail = ex->detail;
        }
        if (ex->ctype_is_plain)
            res.content_type = "text/plain; charset=utf-8";
        if (ex->unsupported_charset) {
            /* The broker turns this signal into unusable_content with the detail. */
            res.detail = ex->detail;
            vf_page_meta_clear(&ex->meta);
            ex->meta.extract = strdup("page");
            ex->has_meta = ex->meta.extract && vf_page_meta_add_signal(&ex->meta, VF_SIGNAL_UNSUPPORTED_CHARSET);
        }
        if (ex->has_meta) {
            /* A provider's JSON answer (and its own headers) is no page to
             * fingerprint; the title it reports still reaches the judge. */
            for (size_t i = 0; job->mode == VF_MODE_RAW && i < fr->wall.n; i++)
                (void)vf_page_meta_add_signal(&ex->meta, fr->wall.tok[i]);
            res.meta = &ex->meta;
        }
    }
    if (detail_override)
        res.detail = (char *)detail_override;
    /* The body is no longer needed; give its memory back before encoding. */
    vf_tbuf_free(&fr->body);
    /* The text is not copied into the message: it is sent from where it is. */
    vf_ipc_err e = vf_result_encode_split(&res, &out->head, &out->head_len, &out->tail, &out->tail_len);
    if (e != VF_IPC_OK) {
        result_frame_free(out);
        snprintf(why, whylen, "result does not encode: %s", vf_ipc_strerror(e));
        return false;
    }
    out->text = res.text;
    out->text_len = res.text_len;
    return true;
}

static void send_result(const result_frame *f)
{
    vf_ipc_part parts[3] = { { f->head, f->head_len }, { f->text, f->text_len }, { f->tail, f->tail_len } };
    vf_ipc_send_frame_parts(VF_WORKER_IPC_FD, parts, 3, -1);
}

/* Receives and decodes the job; on failure it has already answered. */
static int receive_job(vf_job *job, int *sock, bool wait_forever)
{
    void *payload = NULL;
    size_t plen = 0;
    *sock = -1;
    vf_ipc_err e = vf_ipc_recv_frame(VF_WORKER_IPC_FD, VF_IPC_MAX_JOB_FRAME,
                                     wait_forever ? -1 : vf_now_ms() + JOB_WAIT_MS, &payload,
                                     &plen, sock);
    if (e == VF_IPC_ERR_EOF && wait_forever)
        return -1; /* a pool worker the broker let go unused: nothing to say */
    if (e != VF_IPC_OK) {
        answer_error("internal", "job frame not received: %s", vf_ipc_strerror(e));
        return -1;
    }
    const char *field = "";
    e = vf_job_decode(payload, plen, job, &field);
    free(payload);
    if (e != VF_IPC_OK) {
        if (*sock >= 0)
            close(*sock);
        answer_error("internal", "job rejected: %s%s%s", vf_ipc_strerror(e),
                     field[0] ? " in " : "", field);
        return -1;
    }
    if (*sock < 0) {
        vf_job_free(job);
        answer_error("internal", "no socket passed with the job");
        return -1;
    }
    return 0;
}

/* Hex of 16 bytes from OpenSSL's public DRBG, then 16 from its private one
 * (TLS key shares): lets a test prove forked workers do not share either
 * generator's state with each other. */
#ifdef VF_WORKER_TEST_HOOKS
static const char *random_detail(char *buf, size_t len)
{
    unsigned char r[32];
    if (len < 2 * sizeof r + 1 || RAND_bytes(r, 16) != 1 || RAND_priv_bytes(r + 16, 16) != 1)
        return "RAND_bytes failed";
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(buf + 2 * i, 3, "%02x", r[i]);
    return buf;
}
#endif

/* A page the size of a typical article, so the rehearsal grows the heap as a
 * real job would. */
#define REHEARSAL_PARAGRAPHS 160

static char *rehearsal_response(size_t *len)
{
    static const char para[] = "<p>A paragraph of <b>rehearsal</b> text, &amp; an entity.</p>\n";
    size_t body_len = REHEARSAL_PARAGRAPHS * (sizeof para - 1);
    char head[160];
    int hn = snprintf(head, sizeof head,
                      "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                      "Content-Length: %zu\r\nConnection: close\r\n\r\n", body_len);
    char *r = malloc((size_t)hn + body_len);
    if (!r)
        return NULL;
    memcpy(r, head, (size_t)hn);
    for (size_t i = 0; i < REHEARSAL_PARAGRAPHS; i++)
        memcpy(r + hn + i * (sizeof para - 1), para, sizeof para - 1);
    *len = (size_t)hn + body_len;
    return r;
}

void vf_worker_rehearse(void)
{
    /* Keep what the heap grows to: handing pages back to the kernel after the
     * rehearsal would only make the real job fault them in again. */
    mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
    size_t resp_len = 0;
    char *resp = rehearsal_response(&resp_len);
    int sv[2];
    if (!resp || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        free(resp);
        return;
    }
    bool sent = send(sv[0], resp, resp_len, MSG_NOSIGNAL) == (ssize_t)resp_len;
    free(resp);
    vf_job in = { .url = (char *)"http://rehearsal.invalid/", .connect_ip = (char *)"127.0.0.1",
                  .port = 80, .timeout_ms = 1000, .max_body = 1 << 20, .mode = VF_MODE_RAW };
    void *buf = NULL;
    size_t len = 0;
    vf_job job;
    if (!sent || vf_job_encode(&in, &buf, &len) != VF_IPC_OK ||
        vf_job_decode(buf, len, &job, NULL) != VF_IPC_OK) {
        free(buf);
        close(sv[0]);
        close(sv[1]);
        return;
    }
    free(buf);
    char err[64];
    vf_fetch_prepare(&job.url, err, sizeof err);
    vf_fetch_result fr;
    vf_fetch(&job, sv[1], NULL, &fr); /* consumes sv[1] */
    char why[64];
    result_frame frame;
    if (build_result(&job, &fr, NULL, &frame, why, sizeof why))
        result_frame_free(&frame);
    vf_fetch_result_free(&fr);
    vf_job_free(&job);
    close(sv[0]);
    applied = 0;
}

#ifdef VF_WORKER_TEST_HOOKS
/* A hook that forges the frame gets the message in one piece. */
static bool hook_send(const result_frame *f)
{
    if (hook == VF_HOOK_NONE)
        return false;
    size_t len = f->head_len + f->text_len + f->tail_len;
    char *joined = malloc(len ? len : 1);
    if (!joined)
        return false;
    memcpy(joined, f->head, f->head_len);
    if (f->text_len)
        memcpy(joined + f->head_len, f->text, f->text_len);
    if (f->tail_len)
        memcpy(joined + f->head_len + f->text_len, f->tail, f->tail_len);
    bool sent = vf_hook_send(hook, VF_WORKER_IPC_FD, joined, len);
    free(joined);
    return sent;
}
#endif

int vf_worker_serve(const vf_worker_ctx *ctx)
{
    char err[VF_IPC_MAX_DETAIL] = "";
    applied = ctx->layers;
    int joined = ctx->preconfined ? 0 : vf_broker_userns_join(VF_WORKER_USERNS_FD, err, sizeof err);
    if (joined < 0) {
        answer_error("internal", "%s", err);
        return 0;
    }
    in_broker_userns = joined == 1;
    /* A zygote worker closed them before it was confined (close_range is not
     * in its filter). */
    if (!ctx->preconfined && vf_close_inherited_fds(err, sizeof err) != 0) {
        answer_error("internal", "%s", err);
        return 0;
    }
    vf_job job;
    int sock;
    if (receive_job(&job, &sock, ctx->wait_forever) != 0)
        return 0;

#ifdef VF_WORKER_TEST_HOOKS
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
    const char *refusal = NULL;
    if (job.ca_preloaded && !ctx->ca_store)
        refusal = "job asks for the preloaded CA but this worker was given none";
    else if (confine(&job, ctx, sock, err, sizeof err) != 0)
        refusal = "confinement failed";
    if (refusal) {
        answer_error("internal", "%s%s%s", refusal, err[0] ? ": " : "", err);
        close(sock);
        vf_job_free(&job);
        return 0;
    }
    uint32_t missing = job.required_layers & ~applied;
    if (missing) {
        char names[160];
        vf_layers_describe(missing, names, sizeof names);
        answer_error("internal", "required confinement not applied: %s", names);
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
    vf_fetch(&job, sock, job.ca_preloaded ? ctx->ca_store : NULL, &fr);
    const char *detail_override = NULL;
#ifdef VF_WORKER_TEST_HOOKS
    char rnd[80];
    if (hook == VF_HOOK_REPORT_RANDOM)
        detail_override = random_detail(rnd, sizeof rnd);
    if (hook == VF_HOOK_REPORT_CANARY) {
        snprintf(rnd, sizeof rnd, "%016lx", vf_stack_canary_read());
        detail_override = rnd;
    }
    if (hook == VF_HOOK_OPEN_AFTER_LANDLOCK)
        detail_override = hook_note;
    if (hook == VF_HOOK_REPORT_TLS_CTX) {
        vf_client_ctx_counts c = vf_client_ctx_counts_get();
        vf_spki_decoder_counts k = vf_spki_decoder_counts_get();
        snprintf(rnd, sizeof rnd, "made=%u taken=%u keys_reused=%u keys_made=%u", c.made, c.taken, k.reused,
                 k.made);
        detail_override = rnd;
    }
    if (hook == VF_HOOK_REPORT_REHEARSED)
        detail_override = ctx->rehearsed ? "rehearsed=1" : "rehearsed=0";
#endif
    result_frame frame;
    bool built = build_result(&job, &fr, detail_override, &frame, err, sizeof err);
    vf_fetch_result_free(&fr);
    if (!built) {
        answer_error("internal", "%s", err);
    } else {
#ifdef VF_WORKER_TEST_HOOKS
        if (!hook_send(&frame))
#endif
            send_result(&frame);
        result_frame_free(&frame);
    }
    /* What is left is exit and teardown (~0.3 ms on a small page): nobody
     * waits for it, so it should not delay the broker's answer on this CPU. */
    setpriority(PRIO_PROCESS, 0, 19);
#ifdef VF_WORKER_TEST_HOOKS
    vf_hook_after_result(hook);
#endif
    vf_job_free(&job);
    return 0;
}
