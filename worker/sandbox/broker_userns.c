#include "worker/sandbox/broker_userns.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

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
    const uid_t id = VF_WORKER_MAPPED_ID;
    /* Refused when the namespace denies setgroups; then the broker had none
     * to pass on (checked below). */
    if (setgroups(0, NULL) != 0 && errno != EPERM)
        return fail(err, errlen, "setgroups");
    if (setresgid(id, id, id) != 0)
        return fail(err, errlen, "setresgid(subordinate)");
    if (setresuid(id, id, id) != 0)
        return fail(err, errlen, "setresuid(subordinate)");
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0)
        return fail(err, errlen, "getresuid");
    if (ru != id || eu != id || su != id || rg != id || eg != id || sg != id || getgroups(0, NULL) != 0) {
        snprintf(err, errlen, "subordinate uid/gid drop did not stick (supplementary groups left?)");
        return -1;
    }
    if (setresuid(0, 0, 0) == 0) {
        snprintf(err, errlen, "the broker's uid could be regained after the drop");
        return -1;
    }
    return 0;
}
