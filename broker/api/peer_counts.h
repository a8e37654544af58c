/* Open connections per local peer (uid from SO_PEERCRED on the unix socket),
 * so one local user cannot hold every connection the daemon has. */
#ifndef VERIFETCH_PEER_COUNTS_H
#define VERIFETCH_PEER_COUNTS_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct vf_peer_counts vf_peer_counts;

vf_peer_counts *vf_peer_counts_new(unsigned limit);
void vf_peer_counts_free(vf_peer_counts *p);
/* Counts the connection either way; false = this uid is over its limit. */
bool vf_peer_counts_add(vf_peer_counts *p, uid_t uid);
void vf_peer_counts_remove(vf_peer_counts *p, uid_t uid);

#endif
