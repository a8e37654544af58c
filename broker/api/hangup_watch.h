/* Notices a client hanging up while its request is suspended (a lookup
 * running in its own thread): libmicrohttpd does not poll a suspended
 * connection, so one epoll thread watches those sockets for EPOLLRDHUP /
 * EPOLLHUP / EPOLLERR and fires the request's cancellation token. Entries are
 * found by id under the lock, so an event for a request that has just been
 * unwatched (and freed) is simply ignored. */
#ifndef VERIFETCH_HANGUP_WATCH_H
#define VERIFETCH_HANGUP_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "broker/lookup/cancel.h"

typedef struct vf_hangup_watch vf_hangup_watch;

vf_hangup_watch *vf_hangup_watch_start(void);
void vf_hangup_watch_stop(vf_hangup_watch *w);

/* Watch fd until unwatched; fire token (not owned, must outlive the watch)
 * when the peer goes away. Returns an id for unwatch, 0 when not watched. */
uint64_t vf_hangup_watch_add(vf_hangup_watch *w, int fd, vf_cancel *token);
/* true when the peer had hung up (the token was fired). */
bool vf_hangup_watch_remove(vf_hangup_watch *w, uint64_t id);
/* Drain gave up: fire every watched token. */
void vf_hangup_watch_fire_all(vf_hangup_watch *w);
unsigned vf_hangup_watch_count(vf_hangup_watch *w);

#endif
