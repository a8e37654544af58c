#include "broker/api/tcp_listener.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int vf_tcp_listen(const struct sockaddr *addr, socklen_t len, const char *label,
                  struct sockaddr_storage *bound, char *err, size_t errlen)
{
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    socklen_t blen = sizeof *bound;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 || bind(fd, addr, len) != 0 ||
        listen(fd, 1024) != 0 || getsockname(fd, (struct sockaddr *)bound, &blen) != 0) {
        snprintf(err, errlen, "cannot listen on TCP %s: %s", label, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}
