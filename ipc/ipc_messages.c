/* msgpack encoding of vf_job and vf_result (ipc_messages.h): which keys each
 * message has, their types, ranges and rules. The strict machinery they share
 * lives beside this file: ipc_prescan.c bounds the raw bytes before msgpack-c
 * builds anything, ipc_decode.c takes one value into one field, ipc_rules.c
 * holds the value rules the encoder and decoder both apply, ipc_encode.c packs. */
#include "ipc/ipc_messages.h"

#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/ipc_decode.h"
#include "ipc/ipc_encode.h"
#include "ipc/ipc_prescan.h"
#include "ipc/ipc_rules.h"

#define MAX_TIMEOUT_MS 600000u
#define MAX_BODY_LIMIT (256u * 1024u * 1024u)
#define MAX_HTTP_STATUS 999u

static vf_ipc_err check_render(uint32_t render)
{
    bool both = (render & VF_RENDER_LINKS_NONE) && (render & VF_RENDER_LINKS_LIST);
    return (render & ~VF_RENDER_ALL) || both ? VF_IPC_ERR_RANGE : VF_IPC_OK;
}

/* ------------------------------------------------------------------------ */
/* vf_job                                                                     */

enum { J_V, J_URL, J_IP, J_PORT, J_TIMEOUT, J_MAX_BODY, J_CA, J_MODE, J_POINTER,
       J_HEADERS, J_HOOK, J_CA_PRELOADED, J_BPF, J_REQUIRE, J_RENDER, J_TITLE_POINTER, J_FIELD, J_COUNT };
static const char *const job_keys[J_COUNT] = {
    "v", "url", "ip", "port", "timeout_ms", "max_body", "ca", "mode", "pointer",
    "headers", "hook", "ca_preloaded", "bpf", "require", "render", "title_pointer", "field",
};
#define JOB_REQUIRED ((1u << J_V) | (1u << J_URL) | (1u << J_IP) | (1u << J_PORT) | \
                      (1u << J_TIMEOUT) | (1u << J_MAX_BODY) | (1u << J_MODE))

static vf_ipc_err set_job_field(void *out, size_t slot, const msgpack_object *val)
{
    vf_job *job = out;
    uint64_t u = 0;
    vf_ipc_err err;
    switch (slot) {
    case J_V:
        return ipc_take_version(val);
    case J_URL:
        return ipc_take_str(val, ipc_check_url, false, &job->url);
    case J_IP:
        return ipc_take_str(val, ipc_check_ip, false, &job->connect_ip);
    case J_PORT:
        err = ipc_take_uint(val, 1, 65535, &u);
        job->port = (uint16_t)u;
        return err;
    case J_TIMEOUT:
        err = ipc_take_uint(val, 1, MAX_TIMEOUT_MS, &u);
        job->timeout_ms = (uint32_t)u;
        return err;
    case J_MAX_BODY:
        return ipc_take_uint(val, 1, MAX_BODY_LIMIT, &job->max_body);
    case J_CA:
        return ipc_take_bin(val, VF_IPC_MAX_JOB_FRAME, &job->ca_pem, &job->ca_pem_len);
    case J_MODE:
        err = ipc_take_uint(val, VF_MODE_RAW, VF_MODE_JSON, &u);
        job->mode = (vf_response_mode)u;
        return err;
    case J_POINTER:
        return ipc_take_str(val, ipc_check_pointer, false, &job->json_pointer);
    case J_TITLE_POINTER:
        return ipc_take_str(val, ipc_check_pointer, false, &job->title_pointer);
    case J_HEADERS:
        return ipc_take_str_array(val, VF_IPC_MAX_HEADERS, ipc_check_header_line, &job->headers, &job->n_headers);
    case J_HOOK:
        return ipc_take_str(val, ipc_rule_short, false, &job->test_hook);
    case J_CA_PRELOADED:
        return ipc_take_bool(val, &job->ca_preloaded);
    case J_BPF:
        err = ipc_take_bin(val, VF_IPC_MAX_BPF, &job->bpf, &job->bpf_len);
        return err == VF_IPC_OK ? ipc_check_bpf_len(job->bpf_len) : err;
    case J_REQUIRE:
        err = ipc_take_uint(val, 0, VF_LAYER_ALL, &u);
        job->required_layers = (uint32_t)u;
        return err;
    case J_RENDER:
        err = ipc_take_uint(val, 0, VF_RENDER_ALL, &u);
        job->render = (uint32_t)u;
        return err == VF_IPC_OK && check_render(job->render) != VF_IPC_OK ? VF_IPC_ERR_RANGE : err;
    case J_FIELD:
        err = ipc_take_uint(val, 0, VF_FIELD_ALL, &u);
        job->field = (uint32_t)u;
        return err;
    }
    return VF_IPC_ERR_UNKNOWN_FIELD;
}

vf_ipc_err vf_job_decode(const void *buf, size_t len, vf_job *out, const char **field)
{
    const char *ignored;
    if (field == NULL)
        field = &ignored;
    *field = "";
    memset(out, 0, sizeof *out);

    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    const msgpack_object_map *map = NULL;
    uint32_t seen = 0;
    vf_ipc_err err = ipc_unpack_top_map(buf, len, &up, &map);
    if (err == VF_IPC_OK)
        err = ipc_check_version_first(map, field);
    if (err == VF_IPC_OK)
        err = ipc_walk_map(map, job_keys, J_COUNT, &seen, set_job_field, out, field);
    if (err == VF_IPC_OK)
        err = ipc_require(seen, job_keys, J_COUNT, JOB_REQUIRED, field);
    if (err == VF_IPC_OK && out->mode == VF_MODE_JSON && out->json_pointer == NULL) {
        *field = "pointer";
        err = VF_IPC_ERR_MISSING;
    }
    if (err == VF_IPC_OK && out->mode != VF_MODE_JSON && out->title_pointer != NULL) {
        *field = "title_pointer";
        err = VF_IPC_ERR_RANGE;
    }
    if (err == VF_IPC_OK && out->mode != VF_MODE_JSON && out->field != 0) {
        *field = "field";
        err = VF_IPC_ERR_RANGE;
    }
    /* Two CA sources would leave the worker guessing which one it trusts. */
    if (err == VF_IPC_OK && out->ca_preloaded && out->ca_pem != NULL) {
        *field = "ca_preloaded";
        err = VF_IPC_ERR_RANGE;
    }
    msgpack_unpacked_destroy(&up);
    if (err != VF_IPC_OK)
        vf_job_free(out);
    return err;
}

void vf_job_free(vf_job *job)
{
    if (job == NULL)
        return;
    free(job->url);
    free(job->connect_ip);
    free(job->ca_pem);
    free(job->json_pointer);
    free(job->title_pointer);
    for (size_t i = 0; i < job->n_headers; i++)
        free(job->headers[i]);
    free(job->headers);
    free(job->test_hook);
    free(job->bpf);
    memset(job, 0, sizeof *job);
}

/* ------------------------------------------------------------------------ */
/* vf_result                                                                  */

enum { R_V, R_TERR, R_MALFORMED, R_DETAIL, R_STATUS, R_CTYPE, R_LOCATION, R_TEXT,
       R_BODY_BYTES, R_LAYERS, R_META, R_CCTL, R_COUNT };
static const char *const result_keys[R_COUNT] = {
    "v", "terr", "malformed", "detail", "status", "ctype", "location", "text", "body_bytes",
    "layers", "meta", "cctl",
};
#define RESULT_REQUIRED ((1u << R_V) | (1u << R_DETAIL) | (1u << R_STATUS) | \
                         (1u << R_TEXT) | (1u << R_BODY_BYTES))

typedef struct {
    vf_result *res;
    size_t max_text;
    bool borrow_text;        /* note where the text lies instead of copying it */
    const uint8_t *text_at;
} result_target;

static vf_ipc_err set_result_field(void *out, size_t slot, const msgpack_object *val)
{
    result_target *t = out;
    vf_result *res = t->res;
    uint64_t u = 0;
    vf_ipc_err err;
    switch (slot) {
    case R_V:
        return ipc_take_version(val);
    case R_TERR:
        return ipc_take_str(val, ipc_check_terr, true, &res->transport_error);
    case R_MALFORMED:
        return ipc_take_str(val, ipc_rule_detail, true, &res->malformed);
    case R_DETAIL:
        return ipc_take_str(val, ipc_rule_detail, false, &res->detail);
    case R_STATUS:
        err = ipc_take_uint(val, 0, MAX_HTTP_STATUS, &u);
        res->http_status = (int32_t)u;
        return err;
    case R_CTYPE:
        return ipc_take_str(val, ipc_rule_short, true, &res->content_type);
    case R_LOCATION:
        return ipc_take_str(val, ipc_rule_url_any, true, &res->location);
    case R_TEXT:
        if (!t->borrow_text)
            return ipc_take_bin(val, t->max_text, &res->text, &res->text_len);
        if (val->type != MSGPACK_OBJECT_BIN)
            return VF_IPC_ERR_TYPE;
        if (val->via.bin.size > t->max_text)
            return VF_IPC_ERR_RANGE;
        t->text_at = (const uint8_t *)val->via.bin.ptr;
        res->text_len = val->via.bin.size;
        return VF_IPC_OK;
    case R_BODY_BYTES:
        return ipc_take_uint(val, 0, UINT64_MAX, &res->body_bytes);
    case R_LAYERS:
        err = ipc_take_uint(val, 0, VF_LAYER_ALL, &u);
        res->layers = (uint32_t)u;
        return err;
    case R_META:
        return vf_page_meta_unpack(val, &res->meta, NULL);
    case R_CCTL:
        return ipc_take_str(val, ipc_rule_short, true, &res->cache_control);
    }
    return VF_IPC_ERR_UNKNOWN_FIELD;
}

static vf_ipc_err decode_result(const void *buf, size_t len, size_t max_text, bool borrow_text,
                                vf_result *out, const char **field, const uint8_t **text_at)
{
    const char *ignored;
    if (field == NULL)
        field = &ignored;
    *field = "";
    memset(out, 0, sizeof *out);

    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    const msgpack_object_map *map = NULL;
    uint32_t seen = 0;
    result_target target = { .res = out, .max_text = max_text, .borrow_text = borrow_text };
    vf_ipc_err err = ipc_unpack_top_map(buf, len, &up, &map);
    if (err == VF_IPC_OK)
        err = ipc_check_version_first(map, field);
    if (err == VF_IPC_OK)
        err = ipc_walk_map(map, result_keys, R_COUNT, &seen, set_result_field, &target, field);
    if (err == VF_IPC_OK)
        err = ipc_require(seen, result_keys, R_COUNT, RESULT_REQUIRED, field);
    msgpack_unpacked_destroy(&up);
    if (err != VF_IPC_OK)
        vf_result_free(out);
    else if (text_at)
        *text_at = target.text_at;
    return err;
}

vf_ipc_err vf_result_decode(const void *buf, size_t len, size_t max_text,
                            vf_result *out, const char **field)
{
    return decode_result(buf, len, max_text, false, out, field, NULL);
}

vf_ipc_err vf_result_decode_owned(void *buf, size_t len, size_t max_text,
                                  vf_result *out, const char **field)
{
    const uint8_t *text_at = NULL;
    vf_ipc_err err = decode_result(buf, len, max_text, true, out, field, &text_at);
    if (err != VF_IPC_OK) {
        free(buf);
        return err;
    }
    /* Every other field is a copy by now, so the frame can become the text:
     * the blob moves to the front (its msgpack header and at least the map's
     * lie before it, so its terminator fits). */
    uint8_t *frame = buf;
    size_t n = out->text_len;
    if (n > 0 && (text_at == NULL || text_at <= frame || (size_t)(text_at - frame) + n > len)) {
        vf_result_free(out);
        free(buf);
        return VF_IPC_ERR_MSGPACK;
    }
    if (n > 0)
        memmove(frame, text_at, n);
    frame[n] = '\0';
    /* Give back the tail when it is worth a call (large frames are mmap'd). */
    if (len - n > 64u * 1024u) {
        uint8_t *shrunk = realloc(frame, n + 1);
        if (shrunk)
            frame = shrunk;
    }
    out->text = frame;
    return VF_IPC_OK;
}

void vf_result_free(vf_result *res)
{
    if (res == NULL)
        return;
    free(res->transport_error);
    free(res->malformed);
    free(res->detail);
    free(res->content_type);
    free(res->location);
    free(res->cache_control);
    free(res->text);
    vf_page_meta_destroy(res->meta);
    memset(res, 0, sizeof *res);
}

/* ------------------------------------------------------------------------ */
/* Encoding                                                                   */

static vf_ipc_err check_job(const vf_job *job)
{
    vf_ipc_err err;
    if ((err = ipc_check_cstr(job->url, ipc_check_url, false)) != VF_IPC_OK ||
        (err = ipc_check_cstr(job->connect_ip, ipc_check_ip, false)) != VF_IPC_OK ||
        (err = ipc_check_cstr(job->json_pointer, ipc_check_pointer, true)) != VF_IPC_OK ||
        (err = ipc_check_cstr(job->title_pointer, ipc_check_pointer, true)) != VF_IPC_OK ||
        (err = ipc_check_cstr(job->test_hook, ipc_rule_short, true)) != VF_IPC_OK)
        return err;
    if (job->port == 0 || job->timeout_ms == 0 || job->timeout_ms > MAX_TIMEOUT_MS ||
        job->max_body == 0 || job->max_body > MAX_BODY_LIMIT)
        return VF_IPC_ERR_RANGE;
    if (job->mode != VF_MODE_RAW && job->mode != VF_MODE_JSON)
        return VF_IPC_ERR_RANGE;
    if ((job->mode == VF_MODE_JSON && job->json_pointer == NULL) ||
        (job->mode != VF_MODE_JSON && (job->title_pointer != NULL || job->field != 0)) ||
        (job->field & ~VF_FIELD_ALL))
        return VF_IPC_ERR_RANGE;
    if (job->ca_pem == NULL && job->ca_pem_len > 0)
        return VF_IPC_ERR_RANGE;
    if (job->ca_preloaded && job->ca_pem != NULL)
        return VF_IPC_ERR_RANGE;
    if ((job->bpf != NULL || job->bpf_len > 0) &&
        (job->bpf == NULL || ipc_check_bpf_len(job->bpf_len) != VF_IPC_OK))
        return VF_IPC_ERR_RANGE;
    if (job->required_layers & ~VF_LAYER_ALL || check_render(job->render) != VF_IPC_OK)
        return VF_IPC_ERR_RANGE;
    if (job->n_headers > VF_IPC_MAX_HEADERS || (job->n_headers > 0 && job->headers == NULL))
        return VF_IPC_ERR_RANGE;
    for (size_t i = 0; i < job->n_headers; i++) {
        if (job->headers[i] == NULL)
            return VF_IPC_ERR_RANGE;
        err = ipc_check_header_line(job->headers[i], strlen(job->headers[i]));
        if (err != VF_IPC_OK)
            return err;
    }
    return VF_IPC_OK;
}

vf_ipc_err vf_job_encode(const vf_job *job, void **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    vf_ipc_err err = check_job(job);
    if (err != VF_IPC_OK)
        return err;

    uint32_t n_keys = 7 + (job->ca_pem != NULL) + (job->json_pointer != NULL) + (job->title_pointer != NULL) +
                      (job->n_headers > 0) + (job->test_hook != NULL) + job->ca_preloaded +
                      (job->bpf != NULL) + (job->required_layers != 0) + (job->render != 0) +
                      (job->field != 0);
    ipc_encoder e;
    ipc_enc_init(&e);
    ipc_enc_check(&e, msgpack_pack_map(&e.pk, n_keys));
    ipc_put_uint(&e, "v", VF_IPC_VERSION);
    ipc_put_text(&e, "url", job->url);
    ipc_put_text(&e, "ip", job->connect_ip);
    ipc_put_uint(&e, "port", job->port);
    ipc_put_uint(&e, "timeout_ms", job->timeout_ms);
    ipc_put_uint(&e, "max_body", job->max_body);
    if (job->ca_pem != NULL)
        ipc_put_bin(&e, "ca", job->ca_pem, job->ca_pem_len);
    ipc_put_uint(&e, "mode", (uint64_t)job->mode);
    if (job->json_pointer != NULL)
        ipc_put_text(&e, "pointer", job->json_pointer);
    if (job->title_pointer != NULL)
        ipc_put_text(&e, "title_pointer", job->title_pointer);
    if (job->n_headers > 0) {
        ipc_put_key(&e, "headers");
        ipc_enc_check(&e, msgpack_pack_array(&e.pk, job->n_headers));
        for (size_t i = 0; i < job->n_headers; i++)
            ipc_put_str(&e, job->headers[i], strlen(job->headers[i]));
    }
    if (job->test_hook != NULL)
        ipc_put_text(&e, "hook", job->test_hook);
    if (job->ca_preloaded) {
        ipc_put_key(&e, "ca_preloaded");
        ipc_enc_check(&e, msgpack_pack_true(&e.pk));
    }
    if (job->bpf != NULL)
        ipc_put_bin(&e, "bpf", job->bpf, job->bpf_len);
    if (job->required_layers != 0)
        ipc_put_uint(&e, "require", job->required_layers);
    if (job->render != 0)
        ipc_put_uint(&e, "render", job->render);
    if (job->field != 0)
        ipc_put_uint(&e, "field", job->field);
    return ipc_enc_finish(&e, VF_IPC_MAX_JOB_FRAME, buf, len);
}

static vf_ipc_err check_result(const vf_result *res)
{
    vf_ipc_err err;
    if ((err = ipc_check_cstr(res->transport_error, ipc_check_terr, true)) != VF_IPC_OK ||
        (err = ipc_check_cstr(res->malformed, ipc_rule_detail, true)) != VF_IPC_OK ||
        (err = ipc_check_cstr(res->detail, ipc_rule_detail, true)) != VF_IPC_OK ||
        (err = ipc_check_cstr(res->content_type, ipc_rule_short, true)) != VF_IPC_OK ||
        (err = ipc_check_cstr(res->location, ipc_rule_url_any, true)) != VF_IPC_OK ||
        (err = ipc_check_cstr(res->cache_control, ipc_rule_short, true)) != VF_IPC_OK)
        return err;
    if (res->http_status < 0 || res->http_status > (int32_t)MAX_HTTP_STATUS)
        return VF_IPC_ERR_RANGE;
    if (res->text_len > MAX_BODY_LIMIT || (res->text == NULL && res->text_len > 0))
        return VF_IPC_ERR_RANGE;
    if (res->layers & ~VF_LAYER_ALL)
        return VF_IPC_ERR_RANGE;
    return res->meta != NULL ? vf_page_meta_check(res->meta) : VF_IPC_OK;
}

/* The result's message; with tail non-NULL it stops after the text's bin
 * header and the fields after the text go to *tail instead (its bytes are
 * the caller's to send in between). */
static vf_ipc_err result_encode(const vf_result *res, void **buf, size_t *len, void **tail, size_t *tail_len)
{
    *buf = NULL;
    *len = 0;
    vf_ipc_err err = check_result(res);
    if (err != VF_IPC_OK)
        return err;

    uint32_t n_keys = 5 + (res->transport_error != NULL) + (res->malformed != NULL) +
                      (res->content_type != NULL) + (res->location != NULL) + (res->layers != 0) +
                      (res->meta != NULL) + (res->cache_control != NULL);
    size_t max_len = (size_t)MAX_BODY_LIMIT + VF_IPC_RESULT_OVERHEAD;
    ipc_encoder head, after;
    ipc_encoder *e = &head;
    ipc_enc_init(&head);
    ipc_enc_check(e, msgpack_pack_map(&e->pk, n_keys));
    ipc_put_uint(e, "v", VF_IPC_VERSION);
    if (res->transport_error != NULL)
        ipc_put_text(e, "terr", res->transport_error);
    if (res->malformed != NULL)
        ipc_put_text(e, "malformed", res->malformed);
    /* detail is required on the wire; a NULL one means "nothing to add". */
    ipc_put_text(e, "detail", res->detail != NULL ? res->detail : "");
    ipc_put_uint(e, "status", (uint64_t)res->http_status);
    if (res->content_type != NULL)
        ipc_put_text(e, "ctype", res->content_type);
    if (res->location != NULL)
        ipc_put_text(e, "location", res->location);
    if (res->cache_control != NULL)
        ipc_put_text(e, "cctl", res->cache_control);
    if (tail) {
        ipc_put_key(e, "text");
        ipc_enc_check(e, msgpack_pack_bin(&e->pk, res->text_len));
        ipc_enc_init(&after);
        e = &after;
    } else {
        ipc_put_bin(e, "text", res->text, res->text_len);
    }
    ipc_put_uint(e, "body_bytes", res->body_bytes);
    if (res->layers != 0)
        ipc_put_uint(e, "layers", res->layers);
    if (res->meta != NULL) {
        ipc_put_key(e, "meta");
        if (vf_page_meta_pack(&e->pk, res->meta) != VF_IPC_OK)
            e->failed = true;
    }
    if (!tail)
        return ipc_enc_finish(&head, max_len, buf, len);
    if (!head.failed && !after.failed && head.sb.size + res->text_len + after.sb.size > max_len) {
        msgpack_sbuffer_destroy(&head.sb);
        msgpack_sbuffer_destroy(&after.sb);
        return VF_IPC_ERR_RANGE;
    }
    /* Either part alone is under the cap now; a failed one fails both. */
    if (head.failed || after.failed)
        head.failed = after.failed = true;
    vf_ipc_err he = ipc_enc_finish(&head, max_len, buf, len);
    vf_ipc_err te = ipc_enc_finish(&after, max_len, tail, tail_len);
    if (he == VF_IPC_OK && te == VF_IPC_OK)
        return VF_IPC_OK;
    free(*buf);
    free(*tail);
    *buf = *tail = NULL;
    *len = *tail_len = 0;
    return he != VF_IPC_OK ? he : te;
}

vf_ipc_err vf_result_encode(const vf_result *res, void **buf, size_t *len)
{
    return result_encode(res, buf, len, NULL, NULL);
}

vf_ipc_err vf_result_encode_split(const vf_result *res, void **head, size_t *head_len, void **tail,
                                  size_t *tail_len)
{
    *tail = NULL;
    *tail_len = 0;
    return result_encode(res, head, head_len, tail, tail_len);
}

/* ------------------------------------------------------------------------ */
/* Confinement layer names                                                    */

static const char *const layer_names[VF_LAYER_COUNT] = {
    "rlimits", "uid", "userns", "pidns", "netns", "ipcns", "mntns", "landlock", "nnp", "seccomp",
};

const char *vf_layer_name(uint32_t bit)
{
    for (uint32_t i = 0; i < VF_LAYER_COUNT; i++)
        if (bit == (1u << i))
            return layer_names[i];
    return NULL;
}

void vf_layers_describe(uint32_t mask, char *buf, size_t len)
{
    if (len == 0)
        return;
    buf[0] = '\0';
    size_t used = 0;
    for (uint32_t i = 0; i < VF_LAYER_COUNT; i++) {
        if (!(mask & (1u << i)))
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", layer_names[i]);
        if (n < 0 || (size_t)n >= len - used) {
            buf[used] = '\0'; /* whole names only */
            return;
        }
        used += (size_t)n;
    }
}
