/* Absolute deadlines for a connection's request (issue 13 item 6):
 * libmicrohttpd's connection timeout is reset by every byte, so a client
 * trickling a byte every few seconds held a connection for ever. Here each
 * connection has one deadline at a time (the head within head_s of the
 * accept or of the previous answer, the body within body_s of the head);
 * a thread checks them every VF_CONN_TICK_MS and shuts a late connection's
 * socket, which libmicrohttpd then closes. The same thread runs the server's housekeeping (tick). */
#ifndef VERIFETCH_CONN_DEADLINE_H
#define VERIFETCH_CONN_DEADLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define VF_CONN_TICK_MS 100

typedef struct vf_conn_deadlines vf_conn_deadlines;

/* One accepted connection: the socket context libmicrohttpd keeps for it. */
typedef struct vf_conn {
    struct vf_conn *prev, *next;
    int fd;
    int64_t deadline_ms;    /* 0: none (a request is being answered) */
    const char *phase;      /* what was late: "request head" or "request body" */
    bool peer_counted;      /* unix side: counted in the per-uid connections */
    uid_t uid;
} vf_conn;

/* tick(tick_arg) (tick may be NULL) runs on the thread about every VF_CONN_TICK_MS. */
vf_conn_deadlines *vf_conn_deadlines_start(unsigned head_s, unsigned body_s, void (*tick)(void *), void *tick_arg);
void vf_conn_deadlines_stop(vf_conn_deadlines *d);

/* A new connection on fd: its head is due in head_s.
 * NULL when out of memory (the connection then has no deadline of its own). */
vf_conn *vf_conn_add(vf_conn_deadlines *d, int fd);
/* The connection is closing: before libmicrohttpd closes fd. Frees c. */
void vf_conn_remove(vf_conn_deadlines *d, vf_conn *c);
/* Phases: the head came (body due), the request is complete (no deadline
 * while it is answered), the answer went out (the next head due). */
void vf_conn_head_in(vf_conn_deadlines *d, vf_conn *c);
void vf_conn_request_in(vf_conn_deadlines *d, vf_conn *c);
void vf_conn_answered(vf_conn_deadlines *d, vf_conn *c);

#endif
