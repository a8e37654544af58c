#include "worker/sandbox/broker_userns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "worker/sandbox/confine.h"

static int fail(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s: %s", what, strerror(errno));
    return -1;
}

int vf_broker_userns_join(int fd, char *err, size_t errlen)
{
    if (fcntl(fd, F_GETFD) < 0)
        return 0;
    if (ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWUSER)
        return 0;
    if (setns(fd, CLONE_NEWUSER) != 0)
        return fail(err, errlen, "setns(broker user namespace)");
    close(fd);
    return 1;
}

int vf_broker_userns_drop(char *err, size_t errlen)
{
    return vf_drop_ids(VF_WORKER_MAPPED_ID, VF_WORKER_MAPPED_ID, true, "the broker's uid", err, errlen);
}
