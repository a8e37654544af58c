/* The broker's own exhaustion (descriptors, memory, processes, local
 * ports): a failure it causes itself, reported as transport_error with a
 * detail starting "local: " and never charged to an origin's or a
 * provider's circuit (issue 14). One classification for every place that
 * connects, makes a channel or starts a worker. */
#ifndef VERIFETCH_LOCAL_CAUSE_H
#define VERIFETCH_LOCAL_CAUSE_H

#include <stdbool.h>
#include <stddef.h>

/* EMFILE, ENFILE, ENOMEM, ENOBUFS, EAGAIN: the broker ran out, not the peer. */
bool vf_local_exhaustion(int err);

/* What ran out, for a detail: "too many open files (this process)",
 * "too many open files (system-wide)", "out of memory", "no process left"
 * (EAGAIN from fork/clone or pthread_create) or "no local port left"
 * (EAGAIN from connect); port_context picks the EAGAIN reading. */
const char *vf_local_cause(int err, bool port_context);

/* "local: <cause> in the broker (<what>)" into out; returns out. */
char *vf_local_detail(char *out, size_t len, int err, bool port_context, const char *what);

#endif
