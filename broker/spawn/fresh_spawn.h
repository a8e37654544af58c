/* Start a helper executable fresh: exec'd (never a fork of the broker's
 * memory), empty environment, stdin/stdout on /dev/null, stderr on the
 * relay pipe of worker_stderr.h (or /dev/null), the given fds
 * placed at 3, 4, ... and nothing else of the broker's open, signals reset,
 * its own session. Used for workers and for the zygote. */
#ifndef VERIFETCH_FRESH_SPAWN_H
#define VERIFETCH_FRESH_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

#define VF_FRESH_SPAWN_FIRST_FD 3

/* fds[i] becomes fd 3+i in the child (fds[i] == -1: that number stays
 * closed); none of them may already be in 3..3+n-1 (dup2 onto itself would
 * keep CLOEXEC). 0, or -1 with errno. */
int vf_fresh_spawn(const char *path, char *const argv[], const int *fds, size_t n_fds, pid_t *pid);

#endif
