/* A second seccomp filter, stacked once the job (and so the fetch socket's
 * fd number) is known (issue 13 items 7 and 9). The kernel runs every
 * stacked filter and obeys the strictest answer, so this one only narrows
 * the allowlist of seccomp_filter.c:
 *  - sendto() only on the fetch socket: not on stderr (a journal socket
 *    under systemd), the IPC socket or a pair the worker made itself;
 *  - no recvmsg() and no prlimit64(): a zygote worker needed them to take
 *    its job and set its limits, never during the fetch.
 * Hand-written classic BPF, so a zygote worker can build it with nothing
 * but the stack after its allowlist is in force. */
#ifndef VERIFETCH_JOB_FILTER_H
#define VERIFETCH_JOB_FILTER_H

#include <stddef.h>

/* Loads the filter for fetch socket sock (no_new_privs must be set, and an
 * earlier filter must allow seccomp(SECCOMP_SET_MODE_FILTER, 0)). 0, or -1
 * with a reason in err. */
int vf_job_filter_load(int sock, char *err, size_t errlen);

#endif
