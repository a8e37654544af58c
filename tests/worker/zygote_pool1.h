/* A zygote started the way the broker starts it, with a pool of one worker,
 * for tests that look at the zygote process itself. */
#ifndef VERIFETCH_TESTS_ZYGOTE_POOL1_H
#define VERIFETCH_TESTS_ZYGOTE_POOL1_H

#include <sys/types.h>

/* Starts the real verifetch-worker's zygote (pool 1) and returns its pid;
 * fails the test if it cannot. The caller ends it with vf_zygote_stop(). */
pid_t zygote_start_pool1(void);

#endif
