/* The worker's syscall allowlist: everything not listed kills the process. */
#ifndef VERIFETCH_WORKER_SECCOMP_FILTER_H
#define VERIFETCH_WORKER_SECCOMP_FILTER_H

#include <stddef.h>

/* Builds and loads the filter (PR_SET_NO_NEW_PRIVS must already be set).
 * Returns 0, or -1 with a reason in err. */
int vf_seccomp_install(char *err, size_t errlen);

#endif
