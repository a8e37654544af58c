/* The two messages on the broker <-> worker wire, encoded as msgpack maps with
 * short string keys. Decoding is strict: the top level must be a map, every key
 * known and unique, every value of its declared type and within its cap, and
 * nothing may follow the map. */
#ifndef VERIFETCH_IPC_MESSAGES_H
#define VERIFETCH_IPC_MESSAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc_frame.h"
#include "ipc/ipc_limits.h"
#include "ipc/ipc_page_meta.h"

/* Confinement layers a worker applied before it touched the page ("layers" in
 * the result, "require" in the job). */
#define VF_LAYER_RLIMITS   (1u << 0)  /* AS/CPU/NOFILE/FSIZE/NPROC/CORE limits */
#define VF_LAYER_UID       (1u << 1)  /* not root: dropped to VF_WORKER_NOBODY, or never was */
/* The uid a worker started by root drops to. A worker started by anyone else
 * keeps that uid: the same as the broker's (see vf_confinement_report). */
#define VF_WORKER_NOBODY   65534u
/* A worker of a non-root broker that maps a subordinate uid: its uid and gid
 * inside the broker's user namespace (0 there is the broker). */
#define VF_WORKER_MAPPED_ID 1u
/* Where that namespace's descriptor arrives, if at all: an exec'd worker's fd
 * 4 (its fd 3 is the job socket); the zygote's fd 5 (3 control, 4 CA). */
#define VF_WORKER_USERNS_FD 4
#define VF_LAYER_USERNS    (1u << 2)
#define VF_LAYER_PIDNS     (1u << 3)  /* pid 1 of its own pid namespace */
#define VF_LAYER_NETNS     (1u << 4)  /* empty network namespace */
#define VF_LAYER_IPCNS     (1u << 5)
#define VF_LAYER_MNTNS     (1u << 6)
#define VF_LAYER_LANDLOCK  (1u << 7)  /* no filesystem access at all */
#define VF_LAYER_NNP       (1u << 8)  /* PR_SET_NO_NEW_PRIVS */
#define VF_LAYER_SECCOMP   (1u << 9)  /* the allowlist, default kill */
#define VF_LAYER_COUNT     10u
#define VF_LAYER_ALL       ((1u << VF_LAYER_COUNT) - 1u)
#define VF_LAYER_NAMESPACES (VF_LAYER_USERNS | VF_LAYER_PIDNS | VF_LAYER_NETNS | \
                             VF_LAYER_IPCNS | VF_LAYER_MNTNS)

typedef enum { VF_MODE_RAW = 0, VF_MODE_JSON = 1 } vf_response_mode;

/* How the worker renders an HTML page ("render" in the job; 0 = Markdown of
 * the main content with inline links). LINKS_NONE and LINKS_LIST exclude each other. */
#define VF_RENDER_TEXT       (1u << 0)  /* plain text instead of Markdown */
#define VF_RENDER_PAGE       (1u << 1)  /* the whole pruned page, no main-content pick */
#define VF_RENDER_LINKS_NONE (1u << 2)  /* link text only */
#define VF_RENDER_LINKS_LIST (1u << 3)  /* numbered references after the text */
#define VF_RENDER_ALL        0xFu

/* JSON mode: what the string the pointer finds holds ("field" in the job;
 * 0 = the page's text as is). */
#define VF_FIELD_HTML   (1u << 0)  /* an HTML page, rendered like a fetched one */
#define VF_FIELD_BASE64 (1u << 1)  /* the page's bytes in base64 (RFC 4648) */
#define VF_FIELD_ALL    0x3u

/* Broker -> worker: fetch one URL over the fd passed with this frame.
 * Map keys: v, url, ip, port, timeout_ms, max_body, ca, ca_preloaded, mode, pointer,
 * headers, hook, bpf, require, render, title_pointer, field. */
typedef struct {
    char *url;               /* "v" 1; "url": str, http(s) URL of this hop (required) */
    char *connect_ip;        /* "ip": str, vetted address the passed fd is connected to (required) */
    uint16_t port;           /* "port": uint 1..65535 (required) */
    uint32_t timeout_ms;     /* "timeout_ms": uint 1..600000 (required) */
    uint64_t max_body;       /* "max_body": uint 1..(256 MiB), decoded-body cap (required) */
    uint8_t *ca_pem;         /* "ca": bin, PEM CA bundle; may be absent (plain HTTP) */
    size_t ca_pem_len;
    bool ca_preloaded;       /* "ca_preloaded": bool, optional: use the CA the zygote parsed
                              * before forking this worker; never together with "ca" */
    vf_response_mode mode;   /* "mode": uint 0 raw / 1 json (required) */
    char *json_pointer;      /* "pointer": str RFC 6901; required when mode == json */
    char *title_pointer;     /* "title_pointer": str RFC 6901, optional, json mode only: the
                              * page title in the provider's answer (meta.title) */
    char **headers;          /* "headers": array of str "Name: value", no CR/LF, optional */
    size_t n_headers;
    char *test_hook;         /* "hook": str, honoured only by the test-hook worker build */
    uint8_t *bpf;            /* "bpf": bin, optional: the seccomp program to load, a
                              * multiple of 8 bytes, 8..VF_IPC_MAX_BPF */
    size_t bpf_len;
    uint32_t required_layers;/* "require": uint VF_LAYER_* mask, optional: refuse to fetch
                              * unless all of these were applied */
    uint32_t render;         /* "render": uint VF_RENDER_* mask, optional (absent = 0) */
    uint32_t field;          /* "field": uint VF_FIELD_* mask, optional, json mode only */
} vf_job;

/* Worker -> broker: what came back. Map keys: v, terr, malformed, detail, status,
 * ctype, location, text, body_bytes, layers, meta, cctl. */
typedef struct {
    char *transport_error;   /* "terr": str or nil: connect|tls|timeout|too_large|protocol|decode|internal */
    char *malformed;         /* "malformed": str or nil: provider response had the wrong shape */
    char *detail;            /* "detail": str (required, may be empty) */
    int32_t http_status;     /* "status": uint 0..999, 0 = no response (required) */
    char *content_type;      /* "ctype": str or nil */
    char *location;          /* "location": str or nil (3xx Location, unresolved) */
    char *cache_control;     /* "cctl": str or nil: the response's Cache-Control (lookup cache) */
    uint8_t *text;           /* "text": bin (required, may be empty): readable text; NUL-terminated copy */
    size_t text_len;
    uint64_t body_bytes;     /* "body_bytes": uint, decoded body size before extraction (required) */
    uint32_t layers;         /* "layers": uint VF_LAYER_* mask, optional (absent = 0): what
                              * confinement the worker applied */
    vf_page_meta *meta;      /* "meta": map (ipc_page_meta.h), optional: what the worker
                              * learned about an HTML page; freed by vf_result_free */
} vf_result;

/* Encode into a malloc'd buffer (caller frees). Returns VF_IPC_OK or VF_IPC_ERR_NOMEM /
 * VF_IPC_ERR_RANGE if a field breaks its cap (the encoder enforces the same caps). */
vf_ipc_err vf_job_encode(const vf_job *job, void **buf, size_t *len);
vf_ipc_err vf_result_encode(const vf_result *res, void **buf, size_t *len);
/* The same message in three pieces, so a large text is sent from where it
 * lies instead of being copied into the message: *head (ends with the
 * text's bin header), then res->text itself, then *tail (both malloc'd).
 * head + text + tail are the bytes vf_result_encode makes. */
vf_ipc_err vf_result_encode_split(const vf_result *res, void **head, size_t *head_len, void **tail,
                                  size_t *tail_len);

/* Decode strictly. On error *out is left zeroed (nothing to free) and, if
 * field is non-NULL, *field names the offending key (static string) or "" . */
vf_ipc_err vf_job_decode(const void *buf, size_t len, vf_job *out, const char **field);
/* max_text caps the "text" blob (pass the job's max_body). */
vf_ipc_err vf_result_decode(const void *buf, size_t len, size_t max_text,
                            vf_result *out, const char **field);

/* vf_result_decode without the text's copy: takes buf (malloc'd, as
 * vf_ipc_recv_frame gives it) in every case; on success it is out->text
 * (the blob moved to its front), on error it is freed. */
vf_ipc_err vf_result_decode_owned(void *buf, size_t len, size_t max_text,
                                  vf_result *out, const char **field);

void vf_job_free(vf_job *job);

/* Stable name of one VF_LAYER_* bit ("seccomp", "pidns", ...), NULL otherwise. */
const char *vf_layer_name(uint32_t bit);
/* Comma-separated names of the bits in mask ("" for none), always NUL-terminated. */
void vf_layers_describe(uint32_t mask, char *buf, size_t len);
void vf_result_free(vf_result *res);

/* RLIMIT_AS a worker gives itself for a job: the body, its UTF-8 copy (up to
 * 3x) and the extracted text live at once; the fixed part covers libraries,
 * TLS and the parser. Never above the hard limit the worker inherited (the
 * broker logs that clamp once at start-up). */
static inline uint64_t vf_worker_as_bytes(uint64_t max_body)
{
    return 512ull * 1024ull * 1024ull + 6ull * max_body;
}

#endif
