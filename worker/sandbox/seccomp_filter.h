/* The worker's syscall allowlist (everything not listed kills the process),
 * compiled once with libseccomp into a BPF program, and the loader that any
 * worker uses for a program it was given. */
#ifndef VERIFETCH_WORKER_SECCOMP_FILTER_H
#define VERIFETCH_WORKER_SECCOMP_FILTER_H

#include <stdbool.h>
#include <stddef.h>

/* Which program: for a worker confined once it has its job, or for a zygote
 * worker confined while it waits for one. The second also lets it receive the
 * job (recvmsg on the IPC socket), set its job's CPU and memory limits
 * (prlimit64 on itself; raising a hard limit needs a privilege it lacks) and
 * stack the job filter (job_filter.h), which takes both away again. */
typedef enum { VF_SECCOMP_AFTER_JOB, VF_SECCOMP_BEFORE_JOB } vf_seccomp_variant;

/* Compiles the allowlist and exports it as BPF: *prog is malloc'd, *len a
 * whole number of instructions. Returns 0, or -1 with a reason in err. The
 * calls are sorted into a binary tree, so every verdict takes a few steps. */
int vf_seccomp_export(vf_seccomp_variant variant, void **prog, size_t *len, char *err,
                      size_t errlen);

/* The same rules in libseccomp's default layout, one call tested after
 * another: what tests and the install benchmark compare the tree with. */
int vf_seccomp_export_listed(vf_seccomp_variant variant, void **prog, size_t *len, char *err,
                             size_t errlen);

/* A program this loader accepts: non-empty, whole 8-byte instructions, at most
 * BPF_MAXINSNS of them, stored at an address aligned for struct sock_filter. */
bool vf_seccomp_program_ok(const void *prog, size_t len);

/* Installs prog as this process's filter (PR_SET_NO_NEW_PRIVS must already be
 * set). Returns 0, or -1 with a reason in err. */
int vf_seccomp_load(const void *prog, size_t len, char *err, size_t errlen);

#endif
