/* Per-field value rules of the broker <-> worker wire: size caps, no NULs, URL
 * schemes, header lines without CR/LF, whole BPF instructions. Each returns
 * VF_IPC_OK or VF_IPC_ERR_RANGE for n bytes at s (no NUL terminator needed). */
#ifndef VERIFETCH_IPC_RULES_H
#define VERIFETCH_IPC_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "ipc/ipc_frame.h"

typedef vf_ipc_err (*ipc_text_rule)(const char *s, size_t n);

vf_ipc_err ipc_check_text(const char *s, size_t n, size_t cap);
vf_ipc_err ipc_check_url(const char *s, size_t n);         /* http(s) URL */
vf_ipc_err ipc_check_ip(const char *s, size_t n);          /* non-empty address text */
vf_ipc_err ipc_check_pointer(const char *s, size_t n);     /* RFC 6901 JSON pointer */
vf_ipc_err ipc_check_bpf_len(size_t n);                    /* whole sock_filter insns */
vf_ipc_err ipc_check_header_line(const char *s, size_t n); /* "Name: value", no CR/LF */
vf_ipc_err ipc_check_terr(const char *s, size_t n);        /* a known transport error */
vf_ipc_err ipc_rule_short(const char *s, size_t n);        /* VF_IPC_MAX_SHORT */
vf_ipc_err ipc_rule_detail(const char *s, size_t n);       /* VF_IPC_MAX_DETAIL */
vf_ipc_err ipc_rule_url_any(const char *s, size_t n);      /* VF_IPC_MAX_URL, may be relative */

/* rule applied to a NUL-terminated s; NULL passes only when nullable. */
vf_ipc_err ipc_check_cstr(const char *s, ipc_text_rule rule, bool nullable);

#endif
