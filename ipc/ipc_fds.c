#include "ipc/ipc_fds.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

size_t vf_ipc_take_fds(struct msghdr *msg, int *keep, size_t max_keep)
{
    int saved = errno;
    size_t seen = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0))
            continue;
        size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        const unsigned char *data = CMSG_DATA(cm);
        for (size_t i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, data + i * sizeof(int), sizeof fd);
            if (fd < 0)
                continue;
            if (seen < max_keep)
                keep[seen] = fd;
            else
                close(fd);
            seen++;
        }
    }
    errno = saved;
    return seen;
}
