/* How many workers and connections this process can really serve, from its
 * file-descriptor limit: the soft RLIMIT_NOFILE is raised to the hard one,
 * then worker.max_concurrent and the connection limits are fitted into it
 * (clamped with a log line) instead of failing at run time. */
#ifndef VERIFETCH_CAPACITY_H
#define VERIFETCH_CAPACITY_H

#include <stdbool.h>

#define VF_CAPACITY_FDS_PER_SLOT 8u     /* worker socket, pidfd, origin, pipes, cancel token */
#define VF_CAPACITY_FDS_PER_QUEUED 3u   /* a queued lookup's cancellation token and wake-up eventfd */
#define VF_CAPACITY_HEADROOM 4096u      /* connections beyond the admitted lookups: health, idle, bursts that get 503 */
#define VF_CAPACITY_RESERVED_FDS 64u    /* logs, config, resolver, the zygote */
#define VF_CAPACITY_MIN_CONNECTIONS 128u

typedef struct {
    unsigned slots;              /* worker.max_concurrent as it can work */
    unsigned max_connections;    /* per listener */
    unsigned per_peer;           /* per uid / per address: 7/8 of the listener's */
    unsigned long nofile;        /* the limit planned against */
} vf_capacity;

/* listeners: 1 or 2. Logs to stderr what it raised or clamped. */
void vf_capacity_plan(unsigned want_slots, unsigned listeners, vf_capacity *out);
/* The lookups admission lets in at once for a given number of slots (all tenants). */
unsigned vf_capacity_admitted(unsigned slots);

#endif
