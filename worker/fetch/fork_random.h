/* OpenSSL's random generators in forked workers. Every worker starts with a
 * copy of the zygote's DRBGs; TLS randoms and key shares must not come from
 * state another worker holds too. OpenSSL 3.0 reseeds after a fork only when
 * getpid() changed, and a worker is pid 1 of its own namespace -- as is a
 * zygote started as a namespace's first process. */
#ifndef VERIFETCH_FORK_RANDOM_H
#define VERIFETCH_FORK_RANDOM_H

#include <stdbool.h>

/* The zygote, after its last draw and before it forks: every draw from the
 * primary, public or private DRBG reseeds first (the primary from the
 * kernel), so whatever a worker draws is fresh, and a worker that draws
 * nothing (a plain-HTTP job) pays nothing. False if OpenSSL refused; the
 * zygote then does not fork. */
bool vf_fork_random_arm(void);

/* A just-forked worker, first thing: only a worker may settle (below); the
 * zygote stays armed for every worker it forks later. */
void vf_fork_random_in_worker(void);

/* A worker about to draw a lot (its TLS connection): reseeds the three once,
 * then gives them back the zygote's reseed intervals, so the handshake's
 * draws do not each reseed. Does nothing outside a worker, or when done. */
void vf_fork_random_settle(void);

#endif
