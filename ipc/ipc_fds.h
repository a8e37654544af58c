/* Descriptors that arrive as SCM_RIGHTS control data. Whoever calls recvmsg
 * owns every descriptor the kernel installed, wanted or not, so each one must
 * be kept or closed: this does both in one place. */
#ifndef VERIFETCH_IPC_FDS_H
#define VERIFETCH_IPC_FDS_H

#include <stddef.h>
#include <sys/socket.h>

/* Stores the first max_keep descriptors of msg's SCM_RIGHTS data in keep[]
 * (in arrival order; slots not filled are left as they were), closes every
 * other one, and returns how many descriptors arrived in all. errno is
 * preserved. */
size_t vf_ipc_take_fds(struct msghdr *msg, int *keep, size_t max_keep);

#endif
