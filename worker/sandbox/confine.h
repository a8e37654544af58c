/* Process-level confinement steps, in the order main() applies them. Each
 * returns 0 or -1 with a short reason in err. */
#ifndef VERIFETCH_WORKER_CONFINE_H
#define VERIFETCH_WORKER_CONFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/ipc_messages.h" /* VF_WORKER_NOBODY */

#define VF_WORKER_IPC_FD 3

/* Closes every descriptor above the IPC socket, whatever the parent leaked. */
int vf_close_inherited_fds(char *err, size_t errlen);

/* The job-independent limits: NOFILE small, FSIZE/NPROC/CORE 0. */
int vf_apply_fixed_rlimits(char *err, size_t errlen);

/* The job's own: AS from the body cap (skipped under ASan, whose shadow memory
 * needs terabytes of address space), CPU from the timeout. */
int vf_apply_job_rlimits(uint32_t timeout_ms, uint64_t max_body, char *err, size_t errlen);

/* When running as root: no supplementary groups, then 65534:65534 for all of
 * real/effective/saved ids, verified (including that root cannot come back). */
int vf_drop_root(char *err, size_t errlen);

/* Sets real, effective and saved uid and gid to uid/gid with no
 * supplementary groups, then proves the drop stuck and that uid 0 (named
 * regained in the error) cannot be had back. groups_may_be_refused: inside
 * a user namespace that denies setgroups. 0 or -1 with err set. */
int vf_drop_ids(uid_t uid, gid_t gid, bool groups_may_be_refused, const char *regained, char *err,
                size_t errlen);

int vf_set_no_new_privs(char *err, size_t errlen);

/* Clears the effective, permitted and inheritable capability sets: in a new
 * user namespace a worker holds all of them there. Best effort: a service
 * manager's own filter may refuse capset (systemd's ~@privileged does), and
 * then the seccomp allowlist, which admits no call those capabilities would
 * unlock, stands alone. Returns true when they are gone. */
bool vf_drop_capabilities(void);

#endif
