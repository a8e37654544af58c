/* A distinct uid for workers of a non-root broker (issue 13 item 14). With
 * the setuid helpers newuidmap/newgidmap (Debian package "uidmap") and a
 * range for the broker's user in /etc/subuid and /etc/subgid, the broker
 * creates one user namespace at start-up in which 0 is its own uid/gid and
 * VF_WORKER_MAPPED_ID is the first subordinate id. The zygote and exec'd
 * workers join it (worker/sandbox/broker_userns.h) and every worker drops to
 * VF_WORKER_MAPPED_ID: outside, a uid that owns none of the broker's files
 * and cannot signal or trace it. Without helpers or ranges workers keep the
 * broker's uid, as before, and the start-up log says how to change that.
 *
 * Threads: set up from the main thread before any worker is started; the
 * getters from any thread afterwards. */
#ifndef VERIFETCH_BROKER_SUBUID_MAP_H
#define VERIFETCH_BROKER_SUBUID_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct {
    bool active;         /* workers run as worker_uid:worker_gid outside the namespace */
    uid_t worker_uid;    /* the subordinate uid (outside) */
    gid_t worker_gid;
    char detail[300];    /* why not, when !active (for the log) */
} vf_subuid_status;

/* Creates the namespace when this process is not root, enabled is true, and
 * the helpers and ranges exist; otherwise says why not. Never fatal: the
 * result only says which uid workers get. */
void vf_subuid_setup(bool enabled, vf_subuid_status *out);

/* The namespace's descriptor (close-on-exec) to pass to a worker or the
 * zygote, or -1 when none was set up. */
int vf_subuid_userns_fd(void);

/* The subordinate uid workers run as, when set up. */
bool vf_subuid_worker_uid(uid_t *uid);

#endif
