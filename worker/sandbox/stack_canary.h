/* A fresh stack-protector canary for each zygote worker (issue 13 item 9).
 * A forked child inherits its zygote's canary, so one worker that leaks it
 * would hand it to every later one; each child draws its own instead. Safe
 * only where no function active at the call returns afterwards: the
 * zygote's child path ends in _exit, never returning through the frames
 * that were set up with the old value. */
#ifndef VERIFETCH_STACK_CANARY_H
#define VERIFETCH_STACK_CANARY_H

#include <stdbool.h>

/* Replaces this thread's canary with random bits; false where this build
 * does not know where the C library keeps it (the canary then stays). */
bool vf_stack_canary_renew(void);

/* The current canary (for the test-hook worker's report), 0 if unknown. */
unsigned long vf_stack_canary_read(void);

#endif
