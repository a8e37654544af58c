#include "broker/spawn/fresh_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include "broker/spawn/worker_stderr.h"

int vf_fresh_spawn(const char *path, char *const argv[], const int *fds, size_t n_fds, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    if (posix_spawnattr_init(&attr) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    /* Never the broker's stderr (a journal socket under systemd). */
    int err_fd = vf_worker_stderr_fd();
    if (err_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    else
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    for (size_t i = 0; i < n_fds; i++) {
        if (fds[i] >= 0)
            posix_spawn_file_actions_adddup2(&fa, fds[i], VF_FRESH_SPAWN_FIRST_FD + (int)i);
        else
            posix_spawn_file_actions_addclose(&fa, VF_FRESH_SPAWN_FIRST_FD + (int)i);
    }
    /* Nothing else of the broker's crosses exec, CLOEXEC or not. */
    posix_spawn_file_actions_addclosefrom_np(&fa, VF_FRESH_SPAWN_FIRST_FD + (int)n_fds);

    sigset_t none, all_defaults;
    sigemptyset(&none);
    sigfillset(&all_defaults);
    sigdelset(&all_defaults, SIGKILL);
    sigdelset(&all_defaults, SIGSTOP);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all_defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);

    char *envp[] = { NULL };     /* keys may live in the broker's environment */
    int rc = posix_spawn(pid, path, &fa, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}
