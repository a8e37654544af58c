/* Runs a classic BPF seccomp program (as libseccomp exports it) over one
 * system call in user space: its verdict and how many instructions it took.
 * Lets a test compare two programs call by call without installing either. */
#ifndef VERIFETCH_TESTS_BPF_RUN_H
#define VERIFETCH_TESTS_BPF_RUN_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    bool ok;            /* false: an instruction this runner does not know, or no RET reached */
    uint32_t verdict;   /* the value returned (SECCOMP_RET_*) */
    unsigned steps;     /* instructions run, the RET included */
} bpf_outcome;

bpf_outcome bpf_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *call);

#endif
