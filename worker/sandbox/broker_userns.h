/* The broker's mapped user namespace (issue 13 item 14). A broker that is
 * not root and may use the newuidmap/newgidmap helpers creates one user
 * namespace whose uid/gid 0 is the broker's own ids and whose 1 is a
 * subordinate id from /etc/subuid and /etc/subgid, and passes it as a
 * descriptor: to the zygote as fd VF_ZY_USERNS_FD, to an exec'd worker as fd
 * VF_WORKER_USERNS_FD. The process joins it (as 0 there, with the
 * capabilities to set up its other namespaces) and every worker then drops to
 * VF_WORKER_MAPPED_ID: outside the namespace a uid other than the key
 * holder's. Without that descriptor nothing changes. */
#ifndef VERIFETCH_WORKER_BROKER_USERNS_H
#define VERIFETCH_WORKER_BROKER_USERNS_H

#include <stddef.h>

#include "ipc/ipc_messages.h" /* VF_WORKER_MAPPED_ID */

/* 1: fd was a user namespace and we joined it (fd closed); 0: fd is not open
 * or not a user namespace (left alone); -1: joining failed (err says why). */
int vf_broker_userns_join(int fd, char *err, size_t errlen);

/* In the joined namespace: no supplementary groups, VF_WORKER_MAPPED_ID for
 * every uid and gid, verified, and 0 cannot be had back. */
int vf_broker_userns_drop(char *err, size_t errlen);

#endif
