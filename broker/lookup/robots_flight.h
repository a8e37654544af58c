/* One robots.txt fetch per origin at a time (single-flight). The first
 * lookup that finds an origin's robots.txt missing from the cache leads: it
 * fetches, stores what is cacheable, then lands the flight with the HTTP
 * status it got. Lookups that arrive meanwhile wait for that landing,
 * bounded by their own deadline and cancellation, and then read the cache
 * or, for what is never cached (5xx, unreachable), the status. Thread-safe. */
#ifndef VERIFETCH_ROBOTS_FLIGHT_H
#define VERIFETCH_ROBOTS_FLIGHT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct vf_robots_flights vf_robots_flights;

/* What a flight landed with besides an HTTP status (0 = unreachable). */
#define VF_ROBOTS_FLIGHT_GAVE_UP  (-1)   /* the waiter's deadline or cancellation came first */
#define VF_ROBOTS_FLIGHT_AGAIN    (-2)   /* the leader was cancelled: nobody knows; try again */

vf_robots_flights *vf_robots_flights_new(void);
void vf_robots_flights_free(vf_robots_flights *f);

/* True: the caller leads the flight for origin and must land it. False:
 * another lookup led it; *status is what it landed with, or GAVE_UP when
 * deadline_ms passed or cancel_fd (-1 = none) became readable first. */
bool vf_robots_flight_join(vf_robots_flights *f, const char *origin, int64_t deadline_ms, int cancel_fd,
                           int *status);

/* The leader's answer for everyone waiting; the origin's next lookup that
 * misses the cache leads a new flight. */
void vf_robots_flight_land(vf_robots_flights *f, const char *origin, int status);

#endif
