/* Single flight within this process: one fetch per cache key at a time;
 * identical lookups wait for it (broker/fleet/fleet_lookup.c). */
#ifndef VERIFETCH_FLEET_LOOKUP_FLIGHT_H
#define VERIFETCH_FLEET_LOOKUP_FLIGHT_H

#include <stdint.h>

#include "broker/fleet/fleet_internal.h"

/* The fetcher of key in this process when none is yet (registered), else NULL. */
vf_flight *vf_flight_lead(vf_fleet *f, const char *key);
/* NULL: the caller leads (registered in *led). Else the flight it waited on
 * (finished or timed out); the caller then calls vf_flight_leave. */
vf_flight *vf_flight_join(vf_fleet *f, const char *key, uint64_t budget_ms, vf_flight **led);
void vf_flight_leave(vf_fleet *f, vf_flight *fl);
/* The leader is done (fl may be NULL): the waiters wake, a later lookup leads anew. */
void vf_flight_finish(vf_fleet *f, vf_flight *fl);

#endif
