/* The wire version and per-field caps of the broker <-> worker messages. A
 * header of its own so the shared value rules (ipc_rules.c) and decoding
 * helpers (ipc_decode.c) see them without including the messages. */
#ifndef VERIFETCH_IPC_LIMITS_H
#define VERIFETCH_IPC_LIMITS_H

#define VF_IPC_VERSION 1

/* Per-field caps (bytes). */
#define VF_IPC_MAX_URL          8192u
#define VF_IPC_MAX_IP           64u
#define VF_IPC_MAX_SHORT        256u    /* content type, error codes, hook names */
#define VF_IPC_MAX_DETAIL       512u
#define VF_IPC_MAX_POINTER      1024u
#define VF_IPC_MAX_HEADERS      32u     /* count of extra request headers */
#define VF_IPC_MAX_HEADER_LINE  1024u
/* A seccomp program: whole struct sock_filter instructions (8 bytes each), at
 * most the kernel's BPF_MAXINSNS. */
#define VF_IPC_BPF_INSN_BYTES   8u
#define VF_IPC_MAX_BPF          (4096u * VF_IPC_BPF_INSN_BYTES)

#endif
