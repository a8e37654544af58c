/* While the daemon drains after SIGTERM, its listening sockets stay open so
 * that a client already in the accept backlog (or arriving now) gets an HTTP
 * answer, 503 with Retry-After, instead of a reset or a hang. */
#ifndef VERIFETCH_DRAIN_REFUSER_H
#define VERIFETCH_DRAIN_REFUSER_H

typedef struct vf_drain_refuser vf_drain_refuser;

/* fds: listening sockets (not owned; may be -1). NULL when it cannot start. */
vf_drain_refuser *vf_drain_refuser_start(const int *fds, unsigned n);
/* Stops answering, closes what it accepted; the listening fds stay open. */
void vf_drain_refuser_stop(vf_drain_refuser *r);

#endif
