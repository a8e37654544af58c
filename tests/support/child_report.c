#include "child_report.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

ssize_t child_report(void (*fn)(void *ctx, int report_fd), void *ctx, void *out, size_t size, int *status)
{
    *status = -1;
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        fn(ctx, p[1]);
        _exit(97); /* fn must not return */
    }
    close(p[1]);
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(p[0], (char *)out + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(p[0]);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    return (ssize_t)got;
}
